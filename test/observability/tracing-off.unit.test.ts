// Tracing off (no OTEL_TRACES_EXPORTER, or `none`) costs nothing: no provider, context
// manager or propagator is registered, none of the SDK or the instrumentations is loaded,
// an app gets no hook, an operation carries no trace and a log line no trace ID. (Its own
// process, so nothing else in it turned tracing on.)
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { context, createContextKey, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, expect, it } from 'vitest';
import { buildApp } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { createLogger } from '../../common/logger.js';
import { carrierOf } from '../../common/tracing/carrier.js';
import { activeTracing, providerRegistered, startTracing } from '../../common/tracing/start.js';
import { deadEngine } from '../support/dead-engine.js';

const engine = deadEngine();
afterAll(() => engine.close());

/** Modules of the SDK or an instrumentation that this process loaded. */
function loadedTracingModules(): string[] {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).filter((path) =>
    /node_modules\/(@opentelemetry\/(sdk-|exporter-|instrumentation|resources|context-async-hooks)|@fastify\/otel)/.test(path),
  );
}

it.each([{}, { OTEL_TRACES_EXPORTER: 'none' }])('registers nothing and loads nothing with %j', async (env) => {
  expect(await startTracing('api', { env, edge: true })).toBeUndefined();
  expect(activeTracing()).toBeUndefined();
  expect(providerRegistered()).toBe(false);
  // No context manager: a value set in a context is not the active one inside it.
  const key = createContextKey('probe');
  context.with(ROOT_CONTEXT.setValue(key, 1), () => expect(context.active().getValue(key)).toBeUndefined());
  expect(propagation.fields()).toEqual([]);
  expect(loadedTracingModules()).toEqual([]);
});

it('builds an API without any tracing hook, whose requests and log lines carry no trace', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const app = buildApp({
    config: loadApiConfig({ RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'info' }),
    client: engine.client,
    namespace: 'default',
    logger: createLoggerTo(lines),
  });
  await app.ready();
  expect(app.hasRequestDecorator('opentelemetry')).toBe(false);
  const res = await app.inject({
    method: 'GET',
    url: '/healthz',
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  expect(res.statusCode).toBe(200);
  await app.close();
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line).not.toHaveProperty('trace_id');
    expect(line).not.toHaveProperty('span_id');
  }
  expect(carrierOf()).toBeUndefined();
  expect(trace.getActiveSpan()).toBeUndefined();
  expect(loadedTracingModules()).toEqual([]);
});

function createLoggerTo(lines: Array<Record<string, unknown>>) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createLogger('api', { level: 'info', pretty: false, destination: stream });
}
