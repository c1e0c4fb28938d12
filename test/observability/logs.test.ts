// Structured logs end to end, every part a real process: each step of a checkout leaves a
// worker log line carrying the same workflowId (and tenant, key, step), the API and the
// sandboxes bind the same context, and the API key appears nowhere in any output.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { spawnEntry, type ChildHandle } from '../support/processes.js';
import { uniqueId } from '../support/stack.js';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

const SECRET = 'sk-observability-4f1c9e2d7a';
const children: Record<string, ChildHandle> = {};
let apiUrl = '';
let bankUrl = '';
let reservationsUrl = '';

type Line = Record<string, unknown>;
function jsonLines(child: ChildHandle): Line[] {
  return child.output.flatMap((l) => {
    try {
      return [JSON.parse(l) as Line];
    } catch {
      return [];
    }
  });
}

beforeAll(async () => {
  const dir = mkdtempSync(join(inject('tmpRoot'), 'logs-'));
  const [bankPort, reservationsPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  bankUrl = `http://127.0.0.1:${bankPort}`;
  reservationsUrl = `http://127.0.0.1:${reservationsPort}`;
  apiUrl = `http://127.0.0.1:${apiPort}`;
  const taskQueue = uniqueId('logs');
  const base = { LOG_LEVEL: 'info', TEMPORAL_API_KEY_UNUSED: SECRET };
  children.bank = spawnEntry('downstream/bank/server.ts', { ...base, BANK_PORT: String(bankPort), BANK_DB: join(dir, 'bank.db') });
  children.reservations = spawnEntry('downstream/reservations/server.ts', {
    ...base,
    RESERVATIONS_PORT: String(reservationsPort),
    RESERVATIONS_DB: join(dir, 'reservations.db'),
  });
  children.worker = spawnEntry('worker/main.ts', {
    ...base,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    RETRYSAFE_TASK_QUEUE: taskQueue,
    BANK_URL: bankUrl,
    RESERVATIONS_URL: reservationsUrl,
    WORKER_METRICS_ADDRESS: 'off',
  });
  children.api = spawnEntry('client/api/server.ts', {
    ...base,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    RETRYSAFE_TASK_QUEUE: taskQueue,
    API_PORT: String(apiPort),
    RETRYSAFE_API_KEYS: `${SECRET}=acme`,
  });
  await Promise.all([
    children.bank.waitFor('bank listening'),
    children.reservations.waitFor('reservations listening'),
    children.worker.waitFor('worker ready', 120_000),
    children.api.waitFor('api listening'),
  ]);
});

afterAll(async () => {
  for (const child of Object.values(children)) await child.kill('SIGTERM');
});

it('logs each step of a checkout with one workflowId, and never the API key', async () => {
  const key = uniqueId('order');
  const workflowId = `acme/${key}`;
  const res = await fetch(`${apiUrl}/v1/checkouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'idempotency-key': key, 'content-type': 'application/json', prefer: 'wait=30' },
    body: JSON.stringify({ account: 'acc_alice', amount: 4200, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 2 }] }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { status: string }).status).toBe('succeeded');
  // An unauthorized attempt with a near-miss secret must not be echoed either.
  await fetch(`${apiUrl}/v1/operations/${key}`, { headers: { authorization: `Bearer ${SECRET}x` } });
  await new Promise((r) => setTimeout(r, 500)); // let the last lines flush

  const worker = jsonLines(children.worker!).filter((l) => l.workflowId === workflowId);
  for (const step of ['reserve_items', 'charge_payment', 'confirm_reservation']) {
    const lines = worker.filter((l) => l.step === step);
    expect(lines.length, `worker lines for ${step}`).toBeGreaterThanOrEqual(2); // step started + answered
    for (const l of lines) expect(l).toMatchObject({ workflowId, tenant: 'acme', key });
  }
  expect(worker.some((l) => l.msg === 'operation succeeded')).toBe(true);

  const api = jsonLines(children.api!).filter((l) => l.workflowId === workflowId);
  // "operation started" and "request completed"; the "incoming request" line comes before
  // the key is parsed, and shares the reqId.
  expect(api.map((l) => l.msg)).toEqual(['operation started', 'request completed']);
  for (const l of api) expect(l).toMatchObject({ tenant: 'acme', key, reqId: api[0]!.reqId });

  const sandboxes = [...jsonLines(children.bank!), ...jsonLines(children.reservations!)].filter((l) => l.workflowId === workflowId);
  expect(new Set(sandboxes.map((l) => l.step))).toEqual(new Set(['charge', 'reserve']));
  // The worker logs the very X-Request-Id it sends (<workflowId>:<activityId>#<attempt>),
  // so every sandbox line meets the worker line about the same attempt.
  const sent = new Set(worker.filter((l) => l.requestId !== undefined).map((l) => l.requestId));
  expect(sent.size, 'request ids in the worker log').toBeGreaterThanOrEqual(3); // reserve, charge, confirm
  for (const id of sent) expect(id).toMatch(new RegExp(`^${workflowId}:\\d+#\\d+$`)); // acme/order-<hex>: no metacharacters
  for (const l of sandboxes) expect(l).toMatchObject({ tenant: 'acme' });
  expect(new Set(sandboxes.map((l) => l.requestId))).toEqual(sent);

  for (const [name, child] of Object.entries(children)) {
    expect(child.output.join('\n'), `${name} output`).not.toContain(SECRET);
  }
});
