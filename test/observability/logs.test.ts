// Structured logs end to end, every part a real process: each step of a checkout leaves a
// worker log line carrying the same workflowId (and tenant, key, step), the API and the
// sandboxes bind the same context, and the API key appears nowhere in any output.
import { expect, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';

const SECRET = 'sk-observability-4f1c9e2d7a';
const PARTS = ['bank', 'reservations', 'worker', 'api'] as const;

const stack = useFullStack({
  name: 'logs',
  sandboxes: 'process',
  faults: false,
  worker: 'process',
  api: 'process',
  apiKeys: `${SECRET}=acme`,
  env: { LOG_LEVEL: 'info', TEMPORAL_API_KEY_UNUSED: SECRET },
});

type Line = Record<string, unknown>;
function jsonLines(part: (typeof PARTS)[number]): Line[] {
  return stack.output(part).flatMap((l) => {
    try {
      return [JSON.parse(l) as Line];
    } catch {
      return [];
    }
  });
}

it('logs each step of a checkout with one workflowId, and never the API key', async () => {
  const key = uniqueId('order');
  const workflowId = `acme/${key}`;
  const res = await fetch(`${stack.api.url}/v1/checkouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'idempotency-key': key, 'content-type': 'application/json', prefer: 'wait=30' },
    body: JSON.stringify({ account: 'acc_alice', amount: 4200, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 2 }] }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { status: string }).status).toBe('succeeded');
  // An unauthorized attempt with a near-miss secret must not be echoed either.
  await fetch(`${stack.api.url}/v1/operations/${key}`, { headers: { authorization: `Bearer ${SECRET}x` } });
  await new Promise((r) => setTimeout(r, 500)); // let the last lines flush

  const worker = jsonLines('worker').filter((l) => l.workflowId === workflowId);
  for (const step of ['reserve_items', 'charge_payment', 'confirm_reservation']) {
    const lines = worker.filter((l) => l.step === step);
    expect(lines.length, `worker lines for ${step}`).toBeGreaterThanOrEqual(1); // its call answered
    for (const l of lines) expect(l).toMatchObject({ workflowId, tenant: 'acme', key });
  }
  expect(worker.some((l) => l.msg === 'operation succeeded')).toBe(true);

  const api = jsonLines('api').filter((l) => l.workflowId === workflowId);
  // A start's "incoming request" line is written once admission lets it through, so it
  // names the operation too.
  expect(api.map((l) => l.msg)).toEqual(['incoming request', 'operation started', 'request completed']);
  for (const l of api) expect(l).toMatchObject({ tenant: 'acme', key, reqId: api[0]!.reqId });

  const sandboxes = [...jsonLines('bank'), ...jsonLines('reservations')].filter((l) => l.workflowId === workflowId);
  expect(new Set(sandboxes.map((l) => l.step))).toEqual(new Set(['charge', 'reserve']));
  // The worker logs the very X-Request-Id it sends (<workflowId>:<activityId>#<attempt>),
  // so every sandbox line meets the worker line about the same attempt.
  const sent = new Set(worker.filter((l) => l.requestId !== undefined).map((l) => l.requestId));
  expect(sent.size, 'request ids in the worker log').toBeGreaterThanOrEqual(3); // reserve, charge, confirm
  for (const id of sent) expect(id).toMatch(new RegExp(`^${workflowId}:\\d+#\\d+$`)); // acme/order-<hex>: no metacharacters
  for (const l of sandboxes) expect(l).toMatchObject({ tenant: 'acme' });
  expect(new Set(sandboxes.map((l) => l.requestId))).toEqual(sent);

  for (const name of PARTS) {
    expect(stack.output(name).join('\n'), `${name} output`).not.toContain(SECRET);
  }
});
