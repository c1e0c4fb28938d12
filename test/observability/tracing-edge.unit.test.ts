// The API is where tenants' requests arrive: a tenant's traceparent may parent the request's
// span (the trace joins the tenant's), but its sampled flag, and its trace ID that the
// ratio sampler would read, never decide whether retrysafe records it. Every other process
// follows its parent. Through the real app (its Temporal unreachable), the request span
// parents the start span, carries codes and never the body, and the request's log lines
// carry its trace_id and span_id.
import { Writable } from 'node:stream';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { InMemorySpanExporter, SamplingDecision, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { createLogger } from '../../common/logger.js';
import { createSampler, EdgeSampler } from '../../common/tracing/sampler.js';
import { startTracing, stopTracing } from '../../common/tracing/start.js';
import { deadEngine } from '../support/dead-engine.js';

const TENANT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const TENANT_SPAN = 'b7ad6b7169203331';
/** A trace ID every ratio sampler keeps: a tenant could choose it to get recorded. */
const LOW_TRACE = '00000000000000000000000000000001';

function withParent(traceId: string, sampled: boolean, isRemote = true): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: TENANT_SPAN,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote,
  });
}

function decide(sampler: ReturnType<typeof createSampler>, parent: Context, traceId = TENANT_TRACE): boolean {
  return (
    sampler.shouldSample(parent, traceId, 'POST /v1/checkouts', SpanKind.SERVER, {}, []).decision ===
    SamplingDecision.RECORD_AND_SAMPLED
  );
}

describe('the sampler', () => {
  it("at the edge, ignores a tenant's sampled flag: it neither forces a span in nor out", () => {
    const none = createSampler({ name: 'parentbased_traceidratio', ratio: 0 }, { edge: true });
    expect(decide(none, withParent(TENANT_TRACE, true))).toBe(false);
    expect(decide(none, withParent(LOW_TRACE, true), LOW_TRACE)).toBe(false);
    expect(decide(createSampler({ name: 'always_off', ratio: 1 }, { edge: true }), withParent(TENANT_TRACE, true))).toBe(false);
    const all = createSampler({ name: 'parentbased_always_on', ratio: 1 }, { edge: true });
    expect(decide(all, withParent(TENANT_TRACE, false))).toBe(true);
    expect(decide(all, withParent(TENANT_TRACE, true))).toBe(true);
  });

  it("at the edge, samples a tenant's trace by a draw of its own, not by the trace ID the tenant chose", () => {
    const inner = createSampler({ name: 'traceidratio', ratio: 0.5 }, { edge: false });
    // The plain ratio sampler always keeps the low trace ID...
    expect(decide(inner, withParent(LOW_TRACE, false), LOW_TRACE)).toBe(true);
    // ...the edge draws.
    expect(decide(new EdgeSampler(inner, 0.5, () => 0.9), withParent(LOW_TRACE, true), LOW_TRACE)).toBe(false);
    expect(decide(new EdgeSampler(inner, 0.5, () => 0.1), withParent(LOW_TRACE, true), LOW_TRACE)).toBe(true);
  });

  it('elsewhere (and for a local parent at the edge) follows the parent, which is one of ours', () => {
    const worker = createSampler({ name: 'parentbased_always_on', ratio: 1 }, { edge: false });
    expect(decide(worker, withParent(TENANT_TRACE, true))).toBe(true);
    expect(decide(worker, withParent(TENANT_TRACE, false))).toBe(false);
    const edge = createSampler({ name: 'parentbased_always_on', ratio: 1 }, { edge: true });
    expect(decide(edge, withParent(TENANT_TRACE, false, false))).toBe(false);
    expect(decide(edge, ROOT_CONTEXT)).toBe(true);
  });
});

describe('the API with tracing on', () => {
  const spans = new InMemorySpanExporter();
  const lines: Array<Record<string, unknown>> = [];
  const engine = deadEngine();
  let app: App;

  beforeAll(async () => {
    await startTracing('api', { edge: true, env: { OTEL_TRACES_EXPORTER: 'console' }, exportTo: spans });
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    app = buildApp({
      config: loadApiConfig({ RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'info' }),
      client: engine.client,
      namespace: 'default',
      logger: createLogger('api', { level: 'info', pretty: false, destination }),
    });
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await engine.close();
    await stopTracing();
  });

  const named = (name: string) => spans.getFinishedSpans().filter((s) => s.name === name);
  const linesOf = (span: ReadableSpan) => lines.filter((l) => l.span_id === span.spanContext().spanId);

  it("continues a tenant's trace even when its flag says not sampled, and joins its log lines to the span", async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { traceparent: `00-${TENANT_TRACE}-${TENANT_SPAN}-00` },
    });
    expect(res.statusCode).toBe(200);
    const [span] = named('GET /healthz');
    expect(span).toBeDefined();
    expect(span!.kind).toBe(SpanKind.SERVER);
    expect(span!.spanContext().traceId).toBe(TENANT_TRACE);
    expect(span!.parentSpanContext?.spanId).toBe(TENANT_SPAN);
    expect(span!.attributes['http.response.status_code']).toBe(200);
    expect(span!.resource.attributes['service.name']).toBe('retrysafe-api');
    const completed = linesOf(span!).find((l) => l.msg === 'request completed');
    expect(completed).toMatchObject({ trace_id: TENANT_TRACE, span_id: span!.spanContext().spanId });
  });

  it('puts the start of an operation in a span of the request, with codes and keys but never the body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { 'idempotency-key': 'order-traced-1', 'content-type': 'application/json' },
      payload: { account: 'acc_secret_owner', amount: 1250, currency: 'EUR', description: 'a private note' },
    });
    expect(res.statusCode).toBe(503);
    const [request] = named('POST /v1/payments');
    const [start] = named('StartWorkflow:payment');
    expect(request).toBeDefined();
    expect(start).toBeDefined();
    expect(start!.kind).toBe(SpanKind.CLIENT);
    expect(start!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
    expect(start!.spanContext().traceId).toBe(request!.spanContext().traceId);
    expect(start!.attributes).toMatchObject({
      'retrysafe.operation.type': 'payment',
      'retrysafe.tenant': 'default',
      'retrysafe.workflow_id': 'default/order-traced-1',
    });
    expect(start!.status.code).toBe(2); // ERROR: the engine is unreachable
    expect(request!.attributes['http.response.status_code']).toBe(503);
    // Everything recorded about both spans, searched for what the request sent.
    const recorded = JSON.stringify([request, start].map((s) => [s!.name, s!.attributes, s!.status, s!.events, s!.links]));
    for (const secret of ['acc_secret_owner', 'a private note', '1250']) expect(recorded).not.toContain(secret);
    // The request's own lines (the key bound by its route) carry its span.
    const keyed = lines.filter((l) => l.key === 'order-traced-1');
    expect(keyed.length).toBeGreaterThan(0);
    for (const line of keyed) expect(line).toMatchObject({ trace_id: request!.spanContext().traceId });
  });
});
