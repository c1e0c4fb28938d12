// Routes for orchestration and scraping: liveness and readiness (Temporal answers), open
// to all; Prometheus metrics, behind an API key when keys are configured (plugins/auth.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Registry } from 'prom-client';
import type { OperationService } from '../operations/service.js';
import { problems } from '../problems.js';
import { authenticatedResponses, jsonResponse, openRouteResponses } from '../schemas.js';

export interface SystemRoutesOptions {
  service: OperationService;
  registry: Registry;
  readinessTimeoutMs: number;
}

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
        response: openRouteResponses(jsonResponse('Ready', Type.Object({ status: Type.Literal('ready') })), {
          unavailable: 'engine_unavailable: Temporal did not answer in time',
        }),
      },
    },
    async () => {
      if (!(await opts.service.ready(opts.readinessTimeoutMs))) throw problems.engineUnavailable();
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: 'Needs an API key when RETRYSAFE_API_KEYS is set, like every route but /healthz and /readyz.',
        operationId: 'get_metrics',
        tags: ['system'],
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...authenticatedResponses({}),
        },
      },
    },
    async (_request, reply) => {
      reply.type(opts.registry.contentType);
      return opts.registry.metrics();
    },
  );
};
