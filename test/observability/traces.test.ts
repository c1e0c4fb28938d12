// One trace per operation, end to end, every part a real process exporting to a Zipkin
// collector on loopback: a checkout through the API is one trace whose tree is request →
// start → each step → its downstream client call → the sandbox's server span; a checkout
// refused for insufficient funds shows its compensation in the same trace; a retry of the
// key is a short trace of its own that names the operation's and makes no step span; the
// completion webhook's delivery is a span of the operation's trace; and every log line the
// parts wrote about a step or a request carries its trace_id and span_id. The example's
// service continues its caller's trace under a name of its own, and a bad OpenTelemetry
// variable stops a process with a line naming it.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startWebhookReceiver } from '../../tools/chaos/webhook-receiver.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { useFullStack } from '../support/full-stack.js';
import { spawnEntry } from '../support/processes.js';
import { uniqueId } from '../support/stack.js';
import { startZipkinCollector, type ZipkinSpan } from '../support/zipkin-collector.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const collector = await startZipkinCollector();
const receiver = await startWebhookReceiver({ secret: SECRET });
afterAll(async () => {
  await receiver.close();
  await collector.close();
});

const stack = useFullStack({
  name: 'traces',
  sandboxes: 'process',
  faults: false,
  worker: 'process',
  api: 'process',
  env: {
    OTEL_TRACES_EXPORTER: 'zipkin',
    OTEL_EXPORTER_ZIPKIN_ENDPOINT: collector.endpoint,
    // Spans leave each process within a tenth of a second, not the default five.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    LOG_LEVEL: 'info',
    // Dev mode: every request is tenant "default", which has a webhook.
    RETRYSAFE_WEBHOOKS: `default=${receiver.url}`,
    RETRYSAFE_WEBHOOK_SECRETS: `default=${SECRET}`,
  },
});

const service = (span: ZipkinSpan) => span.localEndpoint?.serviceName;
const inTrace = (traceId: string) => collector.spans.filter((s) => s.traceId === traceId);
const childrenOf = (spans: ZipkinSpan[], parent: ZipkinSpan) => spans.filter((s) => s.parentId === parent.id);

function only(spans: ZipkinSpan[], what: string, test: (s: ZipkinSpan) => boolean): ZipkinSpan {
  const found = spans.filter(test);
  expect(found, `${what}: ${JSON.stringify(spans.map((s) => [service(s), s.name]))}`).toHaveLength(1);
  return found[0]!;
}

async function checkout(key: string, account: string, amount: number) {
  const res = await fetch(`${stack.api.url}/v1/checkouts`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'content-type': 'application/json', prefer: 'wait=30' },
    body: JSON.stringify({ account, amount, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 1 }] }),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/**
 * The step's span under `start`, with its outcome, and below it the worker's client call and
 * the service's server span continuing it: the downstream request carried the trace.
 */
function stepCall(spans: ZipkinSpan[], start: ZipkinSpan, step: string, outcome: string, downstream: string) {
  const span = only(spans, step, (s) => s.name === step && s.parentId === start.id);
  expect(service(span)).toBe('retrysafe-worker');
  expect(span.tags).toMatchObject({
    'retrysafe.step': step,
    'retrysafe.outcome': outcome,
    'retrysafe.operation.type': 'checkout',
    'retrysafe.tenant': 'default',
    'retrysafe.service': downstream,
  });
  const client = only(childrenOf(spans, span), `${step}'s client call`, (s) => s.kind === 'CLIENT');
  expect(service(client)).toBe('retrysafe-worker');
  const server = only(childrenOf(spans, client), `${step}'s server span`, (s) => s.kind === 'SERVER');
  expect(service(server)).toBe(`retrysafe-${downstream}`);
  return { span, client, server };
}

type Line = Record<string, unknown>;
function jsonLines(part: 'api' | 'worker' | 'bank' | 'reservations'): Line[] {
  return stack.output(part).flatMap((l) => {
    try {
      return [JSON.parse(l) as Line];
    } catch {
      return [];
    }
  });
}

describe('traces', () => {
  const key = uniqueId('order');
  const workflowId = `default/${key}`;
  let traceId: string;

  it('makes one checkout one trace: request → start → each step → its downstream call → the service', async () => {
    const first = await checkout(key, 'acc_alice', 1250);
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('succeeded');
    traceId = first.body.traceId as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // Three steps, each with its client and server span, and the webhook delivery with its POST.
    await collector.waitFor('the whole checkout trace', () => (inTrace(traceId).length >= 13 ? true : undefined));
    const spans = inTrace(traceId);
    const request = only(spans, 'the request span', (s) => s.name === 'POST /v1/checkouts');
    expect(request).toMatchObject({ kind: 'SERVER', localEndpoint: { serviceName: 'retrysafe-api' } });
    expect(request.parentId).toBeUndefined();
    const start = only(spans, 'the start span', (s) => s.name === 'StartWorkflow:checkout');
    expect(start).toMatchObject({ kind: 'CLIENT', parentId: request.id, localEndpoint: { serviceName: 'retrysafe-api' } });
    expect(start.tags).toMatchObject({ 'retrysafe.workflow_id': workflowId, 'retrysafe.claim': 'started' });

    const reserve = stepCall(spans, start, 'reserve_items', 'done', 'reservations');
    const charge = stepCall(spans, start, 'charge_payment', 'done', 'bank');
    const confirm = stepCall(spans, start, 'confirm_reservation', 'done', 'reservations');
    expect(reserve.span.tags?.['retrysafe.downstream_key']).toBe(`${workflowId}/reserve`);
    expect(charge.span.tags?.['retrysafe.downstream_key']).toBe(`${workflowId}/charge`);
    // The confirm acts on the hold the reserve step made.
    expect(confirm.span.tags?.['retrysafe.downstream_key']).toBe(`${workflowId}/reserve`);
    expect(charge.server.name).toBe('POST /charges');

    // A server span names its route, never the path (which may name an account).
    expect(confirm.server.tags?.['url.path']).toBe(confirm.server.tags?.['http.route']);

    // Nothing recorded names the account.
    expect(JSON.stringify(spans)).not.toContain('acc_alice');

    // The log lines of each step (worker) and of each downstream request (sandboxes) carry their spans.
    const stepLines = jsonLines('worker').filter((l) => l.workflowId === workflowId && l.step === 'charge_payment');
    expect(stepLines.length).toBeGreaterThan(0);
    for (const l of stepLines) expect(l).toMatchObject({ trace_id: traceId, span_id: charge.span.id });
    // Every request the sandboxes served under this operation's keys carried its traceparent.
    const bankLines = jsonLines('bank').filter((l) => l.workflowId === workflowId);
    expect(bankLines.length).toBeGreaterThan(0);
    for (const l of bankLines) expect(l).toMatchObject({ trace_id: traceId, span_id: charge.server.id });
    const reservationLines = jsonLines('reservations').filter((l) => l.workflowId === workflowId);
    expect(reservationLines.length).toBeGreaterThan(0);
    for (const l of reservationLines) {
      expect(l.trace_id).toBe(traceId);
      expect([reserve.server.id, confirm.server.id]).toContain(l.span_id);
    }
    const apiLines = jsonLines('api').filter((l) => l.workflowId === workflowId);
    expect(apiLines.length).toBeGreaterThan(0);
    for (const l of apiLines) expect(l).toMatchObject({ trace_id: traceId, span_id: request.id });
  });

  it("delivers the completion webhook in a span of the operation's trace", async () => {
    const delivery = await collector.waitFor('the delivery span', (spans) =>
      spans.find((s) => s.traceId === traceId && s.name === 'completion_webhook'),
    );
    const start = only(inTrace(traceId), 'the start span', (s) => s.name === 'StartWorkflow:checkout');
    expect(delivery).toMatchObject({ parentId: start.id, localEndpoint: { serviceName: 'retrysafe-worker' } });
    // The webhook-id names the operation's run: `<tenant>/<key>/<runId>/completed`.
    expect(delivery.tags?.['retrysafe.outcome']).toBe('delivered');
    expect(delivery.tags?.['retrysafe.webhook.id']?.startsWith(`${workflowId}/`)).toBe(true);
    expect(delivery.tags?.['retrysafe.webhook.id']).toMatch(/\/[^/]+\/completed$/);
    const post = only(childrenOf(inTrace(traceId), delivery), 'the webhook POST', (s) => s.kind === 'CLIENT');
    expect(post.tags?.['http.response.status_code']).toBe('204');
    expect(receiver.deliveriesOf(`${workflowId}/completed`)).toHaveLength(1);
  });

  it("makes a retry of the key a short trace of its own, naming the operation's trace, with no step span", async () => {
    const stepSpans = () => collector.spans.filter((s) => s.traceId === traceId && service(s) === 'retrysafe-worker').length;
    const before = stepSpans();
    const again = await checkout(key, 'acc_alice', 1250);
    expect(again.status).toBe(200);
    expect(again.replayed).toBe('true');
    expect(again.body.traceId).toBe(traceId);

    const retry = await collector.waitFor('the retry span', (spans) =>
      spans.find((s) => s.name === 'POST /v1/checkouts' && s.tags?.['retrysafe.replayed'] === 'true'),
    );
    expect(retry.traceId).not.toBe(traceId);
    expect(retry.parentId).toBeUndefined();
    expect(retry.tags).toMatchObject({ 'retrysafe.operation.trace_id': traceId, 'retrysafe.workflow_id': workflowId });
    // Whatever else the retry's trace holds, it is the API's: no step ran again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(inTrace(retry.traceId).every((s) => service(s) === 'retrysafe-api')).toBe(true);
    expect(stepSpans()).toBe(before);
  });

  it('shows a compensation in the trace of the checkout it compensated', async () => {
    const poorKey = uniqueId('poor');
    const poor = `default/${poorKey}`;
    const account = await stack.bank.newAccount(100);
    const refused = await checkout(poorKey, account, 5_000);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
    });
    const poorTrace = refused.body.traceId as string;

    await collector.waitFor('the compensated trace', (spans) =>
      spans.some((s) => s.traceId === poorTrace && s.name === 'release_reservation' && spans.some((c) => c.parentId === s.id))
        ? true
        : undefined,
    );
    const spans = inTrace(poorTrace);
    const start = only(spans, 'the start span', (s) => s.name === 'StartWorkflow:checkout');
    stepCall(spans, start, 'reserve_items', 'done', 'reservations');
    const charge = only(spans, 'charge_payment', (s) => s.name === 'charge_payment');
    expect(charge.tags).toMatchObject({ 'retrysafe.outcome': 'refused', 'retrysafe.refusal.code': 'insufficient_funds' });
    // A refusal's details (the balance) stay out of the span.
    expect(JSON.stringify(charge)).not.toMatch(/balance|100 EUR/);
    const release = stepCall(spans, start, 'release_reservation', 'undone', 'reservations');
    expect(release.span.tags).toMatchObject({ 'retrysafe.kind': 'compensation', 'retrysafe.downstream_key': `${poor}/reserve` });
    expect(spans.some((s) => s.name === 'confirm_reservation')).toBe(false);
  });
});

describe("the example's shipping service", () => {
  const shippingEnv = async () => ({
    SHIPPING_PORT: String(await freePort()),
    SHIPPING_DB: `${inject('tmpRoot')}/${uniqueId('shipping')}/shipping.db`,
  });

  it("continues its caller's trace in a server span of its own name", async () => {
    const env = await shippingEnv();
    const shipping = spawnEntry('examples/shipping/service/server.ts', {
      ...env,
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      await shipping.waitFor('shipping listening');
      const caller = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
      const res = await fetch(`http://127.0.0.1:${env.SHIPPING_PORT}/shipments`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': uniqueId('parcel'),
          traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
        },
        body: JSON.stringify({ recipient: 'Ada Lovelace', country: 'FR', postcode: '75001' }),
      });
      expect(res.status).toBe(201);
      const span = await collector.waitFor('the shipping span', (spans) => spans.find((s) => s.traceId === caller.traceId));
      expect(span).toMatchObject({
        name: 'POST /shipments',
        kind: 'SERVER',
        parentId: caller.spanId,
        localEndpoint: { serviceName: 'retrysafe-shipping' },
      });
    } finally {
      await shipping.kill();
    }
  });

  it('refuses to start with a bad OpenTelemetry variable, naming it', async () => {
    const shipping = spawnEntry('examples/shipping/service/server.ts', {
      ...(await shippingEnv()),
      OTEL_TRACES_EXPORTER: 'jaeger',
    });
    try {
      await shipping.waitFor('OTEL_TRACES_EXPORTER="jaeger": "jaeger" is not an exporter retrysafe has');
    } finally {
      await shipping.kill();
    }
    expect(shipping.output.some((l) => l.includes('shipping listening'))).toBe(false);
  });
});
