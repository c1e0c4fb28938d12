// The one OpenTelemetry set-up every process runs first (the API, the worker, the sandboxes,
// the example's service): a tracer provider with the process's service name, the sampler
// and exporters of the standard variables, W3C trace context propagation, and the two
// instrumentations retrysafe uses: undici (the worker's fetch calls to the downstream
// services and the tenants' webhooks) and @fastify/otel (the request span of every HTTP
// server). Neither patches a module: undici reports through diagnostics channels, and
// Fastify's plugin is registered on each app (./fastify.ts).
//
// Off (the default), nothing of the SDK is even loaded: this module and the code that makes
// spans need only @opentelemetry/api, whose calls are no-ops without a provider.
//
// A host application that embeds retrysafe and registered its own tracer provider keeps it:
// retrysafe's spans then go to that provider, and only a context manager and a propagator
// that are missing are added.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  ProxyTracerProvider,
  trace,
  type DiagLogger,
  type TracerProvider,
} from '@opentelemetry/api';
import type { FastifyOtelInstrumentation } from '@fastify/otel';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadTracingSettings, type TracedProcess } from './config.js';
import { bindSpanToLogger } from './log-fields.js';

export interface Tracing {
  /** The service name the process reports (`retrysafe-api`). */
  serviceName: string;
  /** False when a provider the host application registered was kept (our exporters are then not used). */
  ownProvider: boolean;
  /** The request-span plugin every Fastify app of the process registers (./fastify.ts). */
  fastify: FastifyOtelInstrumentation;
  /** Exports what is still buffered and stops; the entry points call it on their way out. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  env?: Record<string, string | undefined>;
  /** The process receives tenants' requests: their sampled flag never decides (see sampler.ts). */
  edge?: boolean;
  /** Export to this instead of the configured exporters, each span as it ends (tests). */
  exportTo?: SpanExporter;
}

/** The SDK's errors are said at most this often. */
const EXPORT_WARNING_INTERVAL_MS = 60_000;
/** How long a process's stop waits for its last spans to be exported. */
const SHUTDOWN_EXPORT_MS = 3_000;

let active: Tracing | undefined;

/** The process's tracing once startTracing turned it on; undefined while tracing is off. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** Whether a tracer provider is registered globally (ours or the host application's). */
export function providerRegistered(): boolean {
  const global = trace.getTracerProvider();
  const noop = new ProxyTracerProvider().getDelegate();
  return !(global instanceof ProxyTracerProvider) || global.getDelegate() !== noop;
}

/**
 * Turns tracing on for `process` when OTEL_TRACES_EXPORTER asks for it (once per process;
 * later calls return the same). Throws ConfigError naming every bad variable.
 */
export async function startTracing(process: TracedProcess, opts: StartTracingOptions = {}): Promise<Tracing | undefined> {
  const settings = loadTracingSettings(process, opts.env ?? globalThis.process.env);
  if (!settings.enabled || active) return active;

  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { FastifyOtelInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@fastify/otel'),
    ]);
  const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici');

  // What is missing is registered; nothing the host set is replaced.
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(contextManager)) contextManager.disable();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  let provider: (TracerProvider & { shutdown(): Promise<void> }) | undefined;
  if (!providerRegistered()) {
    const { createSampler } = await import('./sampler.js');
    const { resourceFromAttributes } = await import('@opentelemetry/resources');
    const processors = opts.exportTo
      ? [new sdk.SimpleSpanProcessor(opts.exportTo)]
      : await Promise.all(settings.exporters.map((name) => processorFor(name, settings.zipkinEndpoint, sdk)));
    provider = new sdk.NodeTracerProvider({
      resource: resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName }),
      sampler: createSampler(settings.sampler, { edge: opts.edge ?? false }),
      spanProcessors: processors,
    });
    trace.setGlobalTracerProvider(provider);
    // An export that fails (the receiver down, a wrong endpoint) would otherwise go unsaid:
    // the SDK reports its errors through the API's diagnostic logger, which has none.
    diag.setLogger(errorWarning(), { logLevel: DiagLogLevel.ERROR, suppressOverrideMessage: true });
  }

  const undici = new UndiciInstrumentation({
    // Only calls made inside a step, a compensation or a delivery are traced: a stray fetch
    // (a probe, a script) starts no trace of its own.
    requireParentforSpans: true,
    // A webhook URL may hold a token in its query: a span keeps the origin and the path.
    startSpanHook: (request) => {
      const query = request.path.indexOf('?');
      if (query < 0) return {};
      return { 'url.full': `${request.origin}${request.path.slice(0, query)}`, 'url.query': '[redacted]' };
    },
  });
  const fastify = new FastifyOtelInstrumentation({
    // One span per request: the hooks' and the handler's own spans would double its cost.
    instrumentHooks: false,
    instrumentHandler: false,
    // An exception's message may quote what the request sent; the status code says enough.
    recordExceptions: false,
    requestHook: (span, request) => {
      const route = request.routeOptions.url ?? 'unrouted';
      span.updateName(`${request.method} ${route}`);
      // A path may name an account (`/accounts/acc_alice`) and a query a cursor: the span
      // keeps the route's template; the call's derived key is on the worker's spans.
      span.setAttribute('url.path', route);
      // Every later line of the request carries the span (log-fields.ts).
      bindSpanToLogger(request.log, span);
    },
  });

  active = {
    serviceName: settings.serviceName,
    ownProvider: provider !== undefined,
    fastify,
    async shutdown() {
      undici.disable();
      fastify.disable();
      // What is buffered is sent if the receiver answers in time; a receiver that is down or
      // silent must not fail or hold a process's stop (those spans are lost, as any export is).
      await Promise.race([provider?.shutdown().catch(() => undefined), sleep(SHUTDOWN_EXPORT_MS, undefined, { ref: false })]);
    },
  };
  return active;
}

/** Shuts the process's tracing down, if it was on (exports what is buffered). */
export async function stopTracing(): Promise<void> {
  const tracing = active;
  active = undefined;
  await tracing?.shutdown();
}

/**
 * The SDK's errors (an export that failed, mostly), said on stderr as a JSON line at pino's
 * warn level: at most once a minute, however often they happen.
 */
function errorWarning(): DiagLogger {
  let warnedAt = -Infinity;
  const ignore = () => undefined;
  return {
    error: (message, ...args) => {
      if (Date.now() - warnedAt < EXPORT_WARNING_INTERVAL_MS) return;
      warnedAt = Date.now();
      const msg = 'OpenTelemetry failed: spans may have been dropped (said at most once a minute)';
      const error = [message, ...args.map((a) => String(a))].join(' ').slice(0, 500);
      process.stderr.write(`${JSON.stringify({ level: 40, time: warnedAt, name: 'tracing', msg, error })}\n`);
    },
    warn: ignore,
    info: ignore,
    debug: ignore,
    verbose: ignore,
  };
}

async function processorFor(
  name: 'otlp' | 'zipkin' | 'console',
  zipkinEndpoint: string,
  sdk: typeof import('@opentelemetry/sdk-trace-node'),
): Promise<SpanProcessor> {
  switch (name) {
    case 'otlp': {
      // The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and _HEADERS itself.
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
      return new sdk.BatchSpanProcessor(new OTLPTraceExporter());
    }
    case 'zipkin': {
      const { ZipkinExporter } = await import('@opentelemetry/exporter-zipkin');
      return new sdk.BatchSpanProcessor(new ZipkinExporter({ url: zipkinEndpoint }));
    }
    case 'console':
      return new sdk.SimpleSpanProcessor(new sdk.ConsoleSpanExporter());
  }
}
