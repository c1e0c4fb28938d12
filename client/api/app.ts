// The HTTP API as a Fastify instance, without listen(): server.ts listens, tests inject.
// One module per concern, wired here in the order their hooks must run: draining (503 while
// closing), then auth (401), then each route's own checks, then admission (429, 503
// engine_busy) for a request that would start an operation.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { Registry } from 'prom-client';
import { RequestEventLog } from '../../common/http/request-log.js';
import { createLogger, type Logger } from '../../common/logger.js';
import { programsOf } from '../../common/programs.js';
import { installRequestTracing } from '../../common/tracing/fastify.js';
import { builtInCatalog, type DefinitionCatalog } from '../../workflows/catalog.js';
import { AdaptiveLimit } from './admission/adaptive-limit.js';
import { InFlight } from './admission/in-flight.js';
import { MemoryWindows } from './admission/memory-windows.js';
import { PostgresWindows } from './admission/postgres-windows.js';
import { RateWindows } from './admission/rate-windows.js';
import type { AdmissionSettings } from './admission/settings.js';
import { SqliteWindows } from './admission/sqlite-windows.js';
import { limitsAnyone } from './admission/tenant-limits.js';
import { registerStuckGauge } from './attention-metric.js';
import type { WindowStore } from './admission/window-store.js';
import { createAuthenticator } from './auth.js';
import { DEV_TENANT, type ApiConfig } from './config.js';
import { errorHandler, notFoundHandler, replyWithProblem, toProblem } from './error-handler.js';
import { createMetrics, type ApiMetrics } from './metrics.js';
import { OperationService } from './engine/service.js';
import { cachedReadiness } from './readiness.js';
import type { ApiInstance } from './instance.js';
import { installAdmission, type AdmissionDeps } from './plugins/admission.js';
import { AllowedMethods } from './plugins/allowed-methods.js';
import { installAuth } from './plugins/auth.js';
import { clientErrorHandler } from './plugins/client-errors.js';
import { installDraining } from './plugins/draining.js';
import { installHttpMetrics } from './plugins/http-metrics.js';
import { installJsonBody } from './plugins/json-body.js';
import { installOpenApi } from './plugins/openapi.js';
import { guardSlowClients, HTTP_LIMITS, NODE_TIMEOUTS_OFF, type HttpLimits } from './plugins/slow-clients.js';
import { operationRoutes } from './routes/operations.js';
import { systemRoutes } from './routes/system.js';
import { CURRENCY_FORMAT, isCurrencyCode } from '../../workflows/fields.js';
import { formatValidationErrors } from './validation.js';

export { HTTP_LIMITS, type HttpLimits } from './plugins/slow-clients.js';

export interface AppDeps {
  config: ApiConfig;
  client: Client;
  namespace: string;
  /** The operations this API starts: the built-in ones unless given (server.ts adds RETRYSAFE_OPERATIONS). */
  operations?: DefinitionCatalog;
  logger?: Logger;
  registry?: Registry;
  now?: () => Date;
  /** Overrides of HTTP_LIMITS (tests shorten them). */
  httpLimits?: Partial<HttpLimits>;
}

const READINESS_TIMEOUT_MS = 2_000;
/** /readyz asks Temporal at most once per this interval. */
const READINESS_INTERVAL_MS = 1_000;
/** Fastify's default: idle keep-alive connections are closed after this. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** The shared store of the tenants' windows the settings name. */
function windowStore(admission: AdmissionSettings): WindowStore {
  const { store, storeTimeoutMs } = admission;
  return store.kind === 'postgres'
    ? new PostgresWindows(store.url, storeTimeoutMs)
    : new SqliteWindows(store.path, storeTimeoutMs);
}

/** Builds the app; plugins load on `ready()`, `inject()` or `listen()`. */
export function buildApp(deps: AppDeps) {
  const { config, client, namespace } = deps;
  const logger = deps.logger ?? createLogger('api', { level: config.logLevel });
  const registry = deps.registry ?? new Registry();
  const metrics = createMetrics(registry);
  metrics.devMode.set(config.devMode ? 1 : 0);
  const now = deps.now ?? (() => new Date());
  const operations = deps.operations ?? builtInCatalog;
  const programs = programsOf(operations.all, config.settings);
  const service = new OperationService({ client, catalog: operations, programs, namespace, config, metrics, logger, now });
  registerStuckGauge(registry, () => service.countStuck());
  const limits = { ...HTTP_LIMITS, ...deps.httpLimits };

  const app = Fastify({ loggerInstance: logger, ...fastifyOptions(config) }).withTypeProvider<TypeBoxTypeProvider>();
  // First, so the request span covers every hook (when tracing is on).
  installRequestTracing(app);
  guardSlowClients(app.server, limits, app.initialConfig.keepAliveTimeout ?? KEEP_ALIVE_TIMEOUT_MS);

  installJsonBody(app);
  installDraining(app, () => service.close());
  app.setErrorHandler(errorHandler);
  installAuth(app, createAuthenticator(config.apiKeys), config.metricsToken);
  const allowedMethods = new AllowedMethods();
  allowedMethods.install(app);
  app.setNotFoundHandler(notFoundHandler);
  installHttpMetrics(app, metrics);
  installAdmission(app, admissionDeps(app, config, metrics, service, logger));

  installOpenApi(app, { catalog: operations, devMode: config.apiKeys === null });
  const readinessTimeoutMs = Math.min(READINESS_TIMEOUT_MS, config.engineTimeoutMs);
  void app.register(systemRoutes, {
    registry,
    ready: cachedReadiness(() => service.ready(readinessTimeoutMs), READINESS_INTERVAL_MS),
    devMode: config.devMode,
  });
  void app.register(operationRoutes, {
    prefix: '/v1',
    service,
    catalog: operations,
    defaultWaitMs: config.defaultWaitMs,
    allowedMethods: (path) => allowedMethods.of(path),
  });
  return app;
}

/** Fastify's settings: limits, the validator's, the answers of its own errors. */
function fastifyOptions(config: ApiConfig) {
  return {
    // Request lines carry an `event` field: tools count requests in flight by it. A start's
    // "incoming request" line waits for admission to let it through (plugins/admission.ts).
    logController: new RequestEventLog((request) => request.routeOptions.config.admission === 'start'),
    // Requests arriving while the instance closes get a problem document (draining), not
    // Fastify's bare JSON 503.
    return503OnClosing: false,
    bodyLimit: config.bodyLimit,
    ...NODE_TIMEOUTS_OFF,
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
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      replyWithProblem(request, reply, toProblem(error));
    },
  } satisfies FastifyServerOptions;
}

/** What admission counts with: the tenants' shared rate windows (opened only when some tenant is limited), the in-flight limit. */
function admissionDeps(
  app: ApiInstance,
  config: ApiConfig,
  metrics: ApiMetrics,
  service: OperationService,
  logger: Logger,
): AdmissionDeps {
  const { admission } = config;
  const windows = limitsAnyone(admission.tenantLimits)
    ? new RateWindows(windowStore(admission), {
        timeoutMs: admission.storeTimeoutMs,
        logger,
        onState: (state) => metrics.rateWindowsShared.set(state === 'shared' ? 1 : 0),
      })
    : undefined;
  if (windows) {
    metrics.rateWindowsShared.set(1);
    // A store that cannot open is logged before the instance listens; it starts all the same.
    app.addHook('onReady', () => windows.check());
    app.addHook('onClose', () => windows.close());
  }
  const limit = new AdaptiveLimit(admission.inFlight);
  return {
    tenantLimits: admission.tenantLimits,
    readLimits: admission.readLimits,
    windows,
    reads: new MemoryWindows(),
    inFlight: new InFlight(
      () => limit.limit,
      undefined,
      () => admission.inFlight.ceiling,
    ),
    limit,
    cached: (ref) => service.answersFromCache(ref),
    tenants: config.apiKeys === null ? [DEV_TENANT] : [...new Set(config.apiKeys.map((k) => k.tenant))],
    metrics,
  };
}

export type App = ReturnType<typeof buildApp>;
