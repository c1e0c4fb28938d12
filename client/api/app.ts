// The HTTP API as a Fastify instance, without listen(): server.ts listens, tests inject.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { createLogger, type Logger } from '../../common/logger.js';
import { createAuthenticator } from './auth.js';
import type { ApiConfig } from './config.js';
import { errorHandler, sendProblem, toProblem } from './error-handler.js';
import { createMetrics } from './metrics.js';
import { OperationService } from './operations.js';
import { problems } from './problems.js';
import { operationRoutes } from './routes/operations.js';
import { systemRoutes } from './routes/system.js';
import { CURRENCY_FORMAT, isCurrencyCode } from './schemas.js';
import { formatValidationErrors } from './validation.js';

export interface AppDeps {
  config: ApiConfig;
  client: Client;
  namespace: string;
  logger?: Logger;
  registry?: Registry;
  now?: () => Date;
}

const READINESS_TIMEOUT_MS = 2_000;

/** Builds the app; plugins load on `ready()`, `inject()` or `listen()`. */
export function buildApp(deps: AppDeps) {
  const { config, client, namespace } = deps;
  const logger = deps.logger ?? createLogger('api', { level: config.logLevel });
  const registry = deps.registry ?? new Registry();
  const metrics = createMetrics(registry);
  const now = deps.now ?? (() => new Date());
  const authenticator = createAuthenticator(config.apiKeys);
  const service = new OperationService({ client, namespace, config, metrics, logger, now });

  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: config.bodyLimit,
    // Keys are up to 255 characters, three times that once percent-encoded.
    routerOptions: { maxParamLength: 1024 },
    ajv: {
      customOptions: {
        // "1250" is not an amount and unknown fields are refused, never dropped.
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        // Every bad field in one answer; bodies are small (bodyLimit), so this stays cheap.
        allErrors: true,
        formats: { [CURRENCY_FORMAT]: { type: 'string', validate: isCurrencyCode } },
      },
    },
    schemaErrorFormatter: formatValidationErrors,
    frameworkErrors: (error, request, reply) => {
      sendProblem(request, reply, toProblem(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Only JSON bodies: a text/plain body is refused (415) rather than failing the schema.
  app.removeContentTypeParser(['text/plain']);

  app.setErrorHandler(errorHandler);
  app.addHook('preClose', async () => service.close());
  app.setNotFoundHandler((request, reply) => {
    sendProblem(request, reply, problems.notFound(request.method, request.url.split('?')[0] ?? '/'));
  });

  app.addHook('onResponse', async (request, reply) => {
    metrics.httpDuration.observe(
      { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'retrysafe',
        version: '1.0.0',
        description:
          'Safe retries for payments and checkouts. Every POST needs an Idempotency-Key; a retry with the same key ' +
          'and body returns the same operation, and a retry after a 503 is always safe.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      tags: [
        { name: 'operations', description: 'Payments, checkouts and their outcomes' },
        { name: 'system', description: 'Health, readiness and metrics' },
      ],
    },
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  void app.register(systemRoutes, {
    service,
    registry,
    readinessTimeoutMs: Math.min(READINESS_TIMEOUT_MS, config.engineTimeoutMs),
  });
  void app.register(operationRoutes, { prefix: '/v1', service, authenticator, defaultWaitMs: config.defaultWaitMs });

  if (authenticator.devMode) {
    logger.warn('DEV MODE: RETRYSAFE_API_KEYS is not set; every request is tenant "default" without an API key');
  }
  return app;
}

export type App = ReturnType<typeof buildApp>;
