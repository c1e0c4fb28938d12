// Routes for orchestration and scraping: liveness and readiness (Temporal answers), open
// to all, readiness saying whether the API runs in dev mode; Prometheus metrics, for
// operators only (plugins/auth.ts): from this machine, or with RETRYSAFE_METRICS_TOKEN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Registry } from 'prom-client';
import { problems } from '../problems.js';
import { authenticatedResponses, jsonResponse, openRouteResponses, problemResponse } from '../schemas.js';

export interface SystemRoutesOptions {
  registry: Registry;
  /** Whether Temporal answers (cached briefly: the route is open to anyone). */
  ready(): Promise<boolean>;
  /** Said by /readyz: an orchestrator or an operator can see an API that runs without authentication. */
  devMode: boolean;
}

const metricsForbiddenResponse = problemResponse("forbidden: a tenant's API key is not accepted on the operators' metrics");

export const systemRoutes: FastifyPluginAsyncTypebox<SystemRoutesOptions> = async (app, opts) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        operationId: 'get_health',
        tags: ['system'],
        // Open to anyone: orchestrators probe without an API key.
        security: [],
        response: openRouteResponses(jsonResponse('Alive', Type.Object({ status: Type.Literal('ok') }))),
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: Temporal answers',
        operationId: 'get_readiness',
        tags: ['system'],
        security: [],
        response: openRouteResponses(
          jsonResponse(
            'Ready',
            Type.Object({
              status: Type.Literal('ready'),
              devMode: Type.Boolean({
                description: 'true: no API keys are configured; every request is tenant default, without authentication',
              }),
            }),
          ),
          { unavailable: 'engine_unavailable: Temporal did not answer in time' },
        ),
      },
    },
    async () => {
      if (!(await opts.ready())) throw problems.engineUnavailable();
      return { status: 'ready' as const, devMode: opts.devMode };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description:
          "The operators' view of the whole platform: a scrape from the API's own machine needs no key, one from elsewhere sends RETRYSAFE_METRICS_TOKEN as its bearer; a tenant's API key is refused (403).",
        operationId: 'get_metrics',
        tags: ['system'],
        // No credentials from the API's own machine; RETRYSAFE_METRICS_TOKEN as the bearer from elsewhere.
        security: [{}, { bearerAuth: [] }],
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...authenticatedResponses({}),
          403: metricsForbiddenResponse,
        },
      },
    },
    async (_request, reply) => {
      reply.type(opts.registry.contentType);
      return opts.registry.metrics();
    },
  );
};
