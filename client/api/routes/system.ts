// Routes for orchestration and scraping: liveness and readiness (Temporal answers), open
// to all; Prometheus metrics, behind an API key when keys are configured (plugins/auth.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Registry } from 'prom-client';
import { problems } from '../problems.js';
import { engineUnavailableResponse, jsonResponse, unauthorizedResponse } from '../schemas.js';

export interface SystemRoutesOptions {
  registry: Registry;
  /** Whether Temporal answers (cached briefly: the route is open to anyone). */
  ready(): Promise<boolean>;
}

export const systemRoutes: FastifyPluginAsyncTypebox<SystemRoutesOptions> = async (app, opts) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        tags: ['system'],
        response: { 200: jsonResponse('Alive', Type.Object({ status: Type.Literal('ok') })) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: Temporal answers',
        tags: ['system'],
        response: {
          200: jsonResponse('Ready', Type.Object({ status: Type.Literal('ready') })),
          503: engineUnavailableResponse,
        },
      },
    },
    async () => {
      if (!(await opts.ready())) throw problems.engineUnavailable();
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: 'Needs an API key when RETRYSAFE_API_KEYS is set, like every route but /healthz and /readyz.',
        tags: ['system'],
        security: [{ bearerAuth: [] }],
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: Type.String() } },
          },
          401: unauthorizedResponse,
        },
      },
    },
    async (_request, reply) => {
      reply.type(opts.registry.contentType);
      return opts.registry.metrics();
    },
  );
};
