// A host application that embeds retrysafe and registered its own tracer provider keeps
// it: turning retrysafe's tracing on adds no provider, and retrysafe's spans go to the
// host's. (Its own process: the global provider can be set only once.)
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, expect, it } from 'vitest';
import { activeTracing, startTracing, stopTracing } from '../../common/tracing/start.js';

afterAll(async () => {
  await stopTracing();
});

it("keeps the provider the host application registered, and sends retrysafe's spans to it", async () => {
  const hostSpans = new InMemorySpanExporter();
  const host = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(hostSpans)] });
  expect(trace.setGlobalTracerProvider(host)).toBe(true);
  const ours = new InMemorySpanExporter();

  const tracing = await startTracing('worker', { env: { OTEL_TRACES_EXPORTER: 'console' }, exportTo: ours });

  expect(tracing).toBeDefined();
  expect(tracing!.ownProvider).toBe(false);
  expect(activeTracing()).toBe(tracing);
  trace.getTracer('retrysafe-worker').startSpan('charge_payment').end();
  expect(hostSpans.getFinishedSpans().map((s) => s.name)).toEqual(['charge_payment']);
  expect(ours.getFinishedSpans()).toEqual([]);
});
