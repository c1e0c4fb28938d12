// The HTTP API as a Fastify instance, without listen(): server.ts listens, tests inject.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import Fastify, { type ConnectionError } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Registry } from 'prom-client';
import { createLogger, type Logger } from '../../common/logger.js';
import { createAuthenticator } from './auth.js';
import type { ApiConfig } from './config.js';
import { errorHandler, sendProblem, toProblem } from './error-handler.js';
import { createMetrics } from './metrics.js';
import { OperationService } from './operations.js';
import { ApiProblem, PROBLEM_CONTENT_TYPE, problems } from './problems.js';
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
  /** Overrides of HTTP_LIMITS (tests shorten them). */
  httpLimits?: Partial<HttpLimits>;
}

const READINESS_TIMEOUT_MS = 2_000;
/** Fastify's default: idle keep-alive connections are closed after this. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export interface HttpLimits {
  /** The request line and headers must arrive within this. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** How often Node looks for connections past those limits. */
  checkIntervalMs: number;
}

/**
 * Slow clients (slowloris: a header byte a second, a body that never ends) would otherwise
 * hold a connection for as long as they like: Fastify turns Node's request timeout off.
 * Both limits cover receiving the request only; the wait for an outcome (Prefer: wait=60)
 * comes after it and is not cut short.
 */
export const HTTP_LIMITS: HttpLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, checkIntervalMs: 1_000 };

/**
 * Node enforces headersTimeout/requestTimeout through a list of connections which, on
 * Node 20, loses connections accepted in the same moment (a burst of slowloris sockets is
 * exactly that); those are then never timed out. So every connection also carries a
 * deadline of its own: its request headers within the headers timeout of connecting (or
 * of its previous answer plus the keep-alive timeout), its body within the request timeout
 * of its headers. A request that has been received in full is never cut short.
 */
function guardSlowClients(server: Server, limits: HttpLimits, keepAliveMs: number): void {
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  const current = new WeakMap<Socket, IncomingMessage>();
  const arm = (socket: Socket, ms: number) => {
    clearTimeout(deadlines.get(socket));
    const timer = setTimeout(() => {
      if (socket.destroyed || current.get(socket)?.complete) return;
      const err = Object.assign(new Error('the request did not arrive in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
      server.emit('clientError', err, socket);
    }, ms);
    timer.unref();
    deadlines.set(socket, timer);
  };
  server.on('connection', (socket: Socket) => {
    arm(socket, limits.headersTimeoutMs);
    socket.once('close', () => clearTimeout(deadlines.get(socket)));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    current.set(socket, req);
    arm(socket, limits.requestTimeoutMs);
    res.once('finish', () => {
      if (current.get(socket) !== req || socket.destroyed) return;
      current.delete(socket);
      arm(socket, keepAliveMs + limits.headersTimeoutMs);
    });
  });
}

/** Liveness and readiness: probed by orchestrators, which hold no API key. */
const OPEN_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * Errors of the HTTP parser (a header section over 16 KiB, a control character in a
 * header, a request that did not arrive in time), raised before any route runs: answered
 * as problem details too, then the connection is closed. The raw request is never logged,
 * since it holds the Authorization header.
 */
function clientErrorHandler(this: { log: Logger }, err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const problem =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiProblem(408, 'request_timeout', 'the request did not arrive in time')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiProblem(431, 'headers_too_large', 'the request headers exceed 16 KiB')
        : problems.invalidRequest('the request is not valid HTTP/1.1', []);
  this.log.debug({ code: err.code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(problem.body());
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Builds the app; plugins load on `ready()`, `inject()` or `listen()`. */
export function buildApp(deps: AppDeps) {
  const { config, client, namespace } = deps;
  const logger = deps.logger ?? createLogger('api', { level: config.logLevel });
  const registry = deps.registry ?? new Registry();
  const metrics = createMetrics(registry);
  const now = deps.now ?? (() => new Date());
  const authenticator = createAuthenticator(config.apiKeys);
  const service = new OperationService({ client, namespace, config, metrics, logger, now });
  const limits = { ...HTTP_LIMITS, ...deps.httpLimits };

  const app = Fastify({
    loggerInstance: logger,
    // Requests arriving while the instance closes get a problem document (below), not
    // Fastify's bare JSON 503.
    return503OnClosing: false,
    bodyLimit: config.bodyLimit,
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    clientErrorHandler,
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
  guardSlowClients(app.server, limits, app.initialConfig.keepAliveTimeout ?? KEEP_ALIVE_TIMEOUT_MS);

  // Only JSON bodies: a text/plain body is refused (415) rather than failing the schema.
  app.removeContentTypeParser(['text/plain']);
  // JSON is UTF-8 (RFC 8259). Decoding invalid bytes would turn them into U+FFFD, so two
  // different requests could share one fingerprint: they are refused instead.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(problems.invalidRequest('the body is not valid UTF-8', [{ field: 'body', message: 'is not valid UTF-8' }]), undefined);
      return;
    }
    parseJson(request, bytes.toString('utf8'), done);
  });

  // A request on a kept-alive connection while this instance closes starts nothing and
  // tells the client to come back (to this instance's successor or another one).
  let closing = false;
  app.addHook('onRequest', async () => {
    if (closing) throw problems.shuttingDown();
  });
  app.addHook('preClose', async () => {
    closing = true;
    await service.close();
  });

  app.setErrorHandler(errorHandler);
  // With API keys configured, every route needs one but liveness and readiness: the
  // metrics and the API description tell too much to hand to anyone who reaches the port.
  // (The /v1 routes also resolve the tenant in their own hook.) An unknown path still
  // answers 404, which tells nothing.
  if (!authenticator.devMode) {
    app.addHook('onRequest', async (request) => {
      if (request.is404 || OPEN_ROUTES.has(request.routeOptions.url ?? '')) return;
      if (authenticator.tenantFor(request.headers.authorization) === undefined) throw problems.unauthorized();
    });
  }
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
