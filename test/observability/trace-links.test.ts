// A retry of a key is a trace of its own with a span link to the operation's trace (the
// span the operation's carrier names: its start), whether the API answers it from its
// cache of outcomes or, on an instance that never saw the key, from the memo the start
// wrote. Zipkin has no links, so this reads the spans in this process: every part runs here,
// exporting to one in-memory exporter.
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, expect, it } from 'vitest';
import { startTracing, stopTracing } from '../../common/tracing/start.js';
import { startApi } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';

const spans = new InMemorySpanExporter();
await startTracing('api', { edge: true, env: { OTEL_TRACES_EXPORTER: 'console' }, exportTo: spans });
afterAll(() => stopTracing());

const stack = useFullStack({ name: 'trace-links', faults: false });

const body = { account: 'acc_alice', amount: 900, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 1 }] };

it("links each retry of a key to the operation's trace, from the cache and from the memo", async () => {
  const key = uniqueId('order');
  const headers = { 'idempotency-key': key, prefer: 'wait=30' };
  const first = await stack.api.request('POST', '/v1/checkouts', { body, headers });
  expect(first.body.status).toBe('succeeded');
  const traceId = first.body.traceId as string;
  const start = spans.getFinishedSpans().find((s) => s.name === 'StartWorkflow:checkout' && s.spanContext().traceId === traceId);
  expect(start).toBeDefined();
  const stepSpans = () => spans.getFinishedSpans().filter((s) => s.attributes['retrysafe.step'] !== undefined).length;
  const steps = stepSpans();
  expect(steps).toBeGreaterThanOrEqual(3);

  const other = await startApi({ taskQueue: stack.taskQueue });
  try {
    for (const api of [stack.api, other]) {
      const again = await api.request('POST', '/v1/checkouts', { body, headers });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.traceId).toBe(traceId);
    }
  } finally {
    await other.close();
  }

  const retries = spans
    .getFinishedSpans()
    .filter((s) => s.kind === SpanKind.SERVER && s.attributes['retrysafe.replayed'] === true);
  expect(retries).toHaveLength(2);
  for (const retry of retries) {
    expect(retry.name).toBe('POST /v1/checkouts');
    expect(retry.spanContext().traceId).not.toBe(traceId);
    expect(retry.parentSpanContext).toBeUndefined();
    expect(retry.links.map((l) => l.context)).toEqual([
      expect.objectContaining({ traceId, spanId: start!.spanContext().spanId }),
    ]);
  }
  // The instance that never saw the key found it taken; neither retry ran a step.
  const taken = spans
    .getFinishedSpans()
    .filter((s) => s.name === 'StartWorkflow:checkout' && s.attributes['retrysafe.claim'] === 'taken');
  expect(taken.map((s) => s.spanContext().traceId)).toEqual([retries[1]!.spanContext().traceId]);
  expect(stepSpans()).toBe(steps);
});
