// The whole stack on the multi-process Temporal cluster on PostgreSQL (`npm run
// test:cluster`): the same API, workers and sandboxes as everywhere else, pointed at a
// frontend, a matching service and two history processes as separate OS processes. A
// payment and a checkout end to end, a retry answered from the stored outcome, a changed
// body refused, a history recorded by the cluster replayed against today's workflow code,
// and one history process killed outright under load with every operation ending once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChaosStack, type ChaosStack } from '../../tools/chaos/stack.js';
import { WORKFLOWS_PATH } from '../../worker/create.js';
import { downstreamKey, operationRef } from '../../workflows/identity.js';

let stack: ChaosStack;
let dir: string;
const lines: string[] = [];
let run = 0;
const uniqueKey = (what: string) => `cluster-${what}-${process.pid}-${++run}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'retrysafe-cluster-test-'));
  stack = await startChaosStack(dir, (line) => lines.push(line), 'cluster');
}, 900_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function post(path: string, key: string, body: unknown, api = 0): Promise<Answer> {
  const res = await fetch(`${stack.apiUrls[api]}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, prefer: 'wait=30' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const balance = async (account: string) => Number((await getJson(`${stack.bankUrl}/accounts/${account}`)).body.balance);
const charge = (key: string) =>
  getJson(`${stack.bankUrl}/charges/${encodeURIComponent(downstreamKey(operationRef('default', key).workflowId, 'charge'))}`);

/**
 * A client that does what a careful caller does: the same request with the same key until
 * the operation has ended, whatever the transport or the engine answers meanwhile.
 */
async function untilEnded(path: string, key: string, body: unknown, api: number): Promise<Answer> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    try {
      const answer = await post(path, key, body, api);
      if (answer.status === 200) return answer;
      if (answer.status !== 202 && answer.status !== 503)
        throw new Error(`${key}: ${answer.status} ${JSON.stringify(answer.body)}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(`${key}:`)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`${key} did not end within 240 s`);
    await sleep(500);
  }
}

const quiet = () => undefined;
const quietBundler = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: console.warn, error: console.error };

describe('the stack on the Temporal cluster on PostgreSQL', () => {
  it('runs a payment once: succeeded, charged once, the retry answered from the stored outcome', async () => {
    const key = uniqueKey('pay');
    const body = { account: 'acc_chaos_1', amount: 1250, currency: 'EUR' };
    const before = await balance('acc_chaos_1');
    const first = await post('/v1/payments', key, body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ key, type: 'payment', status: 'succeeded' });
    const chargeId = (first.body.result as Record<string, unknown>).chargeId;
    expect(chargeId).toMatch(/^ch_/);

    // Through the other API instance: the same operation, not a second charge.
    const again = await post('/v1/payments', key, body, 1);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body.result as Record<string, unknown>).chargeId).toBe(chargeId);
    expect(await balance('acc_chaos_1')).toBe(before - 1250);
    expect((await charge(key)).body).toMatchObject({ status: 'captured', amount: 1250 });
  });

  it('runs a checkout: items held, charged, confirmed', async () => {
    const key = uniqueKey('order');
    const before = await balance('acc_chaos_2');
    const stockBefore = (await getJson(`${stack.reservationsUrl}/inventory/sku_chaos_a`)).body;
    const res = await post('/v1/checkouts', key, {
      account: 'acc_chaos_2',
      amount: 4200,
      currency: 'EUR',
      items: [{ sku: 'sku_chaos_a', quantity: 2 }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      steps: [
        { name: 'reserve_items', status: 'completed' },
        { name: 'charge_payment', status: 'completed' },
        { name: 'confirm_reservation', status: 'completed' },
      ],
    });
    expect(await balance('acc_chaos_2')).toBe(before - 4200);
    expect((await getJson(`${stack.reservationsUrl}/inventory/sku_chaos_a`)).body).toMatchObject({
      available: Number(stockBefore.available) - 2,
      held: 0,
    });
  });

  it('refuses the same key with another amount: 422, nothing charged a second time', async () => {
    const key = uniqueKey('changed');
    expect((await post('/v1/payments', key, { account: 'acc_chaos_3', amount: 500, currency: 'EUR' })).status).toBe(200);
    const before = await balance('acc_chaos_3');
    const changed = await post('/v1/payments', key, { account: 'acc_chaos_3', amount: 501, currency: 'EUR' });
    expect(changed.status).toBe(422);
    expect(changed.body).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await balance('acc_chaos_3')).toBe(before);
  });

  it("replays a history the cluster recorded against today's workflow code", async () => {
    const key = uniqueKey('replay');
    const res = await post('/v1/checkouts', key, {
      account: 'acc_chaos_1',
      amount: 900,
      currency: 'EUR',
      items: [{ sku: 'sku_chaos_b', quantity: 1 }],
    });
    expect(res.body.status).toBe('succeeded');
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      const history = await new Client({ connection }).workflow.getHandle(`default/${key}`).fetchHistory();
      expect(history.events?.length).toBeGreaterThan(5);
      // Throws DeterminismViolationError if the code no longer makes the recorded decisions.
      const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundler });
      await Worker.runReplayHistory({ workflowBundle: bundle }, history, `default/${key}`);
    } finally {
      await connection.close();
    }
  }, 180_000);

  it('when a history process is killed outright mid-load, every payment ends succeeded and is charged once', async () => {
    const count = 30;
    const before = await balance('acc_chaos_1');
    const payments = Array.from({ length: count }, (_, i) => ({ key: uniqueKey(`load-${i}`), amount: 100 + i }));
    const ended = payments.map(async ({ key, amount }, i) => {
      // Spread over a few seconds, so that some start before the kill, some during the failover.
      await sleep(i * 200);
      return untilEnded('/v1/payments', key, { account: 'acc_chaos_1', amount, currency: 'EUR' }, i % 2);
    });
    await sleep(2_000);
    const killed = await stack.kill('temporal-history-1');
    expect(killed.downMs).toBeGreaterThan(0);
    const answers = await Promise.all(ended);

    expect(answers.map((a) => a.body.status)).toEqual(payments.map(() => 'succeeded'));
    for (const { key, amount } of payments) expect((await charge(key)).body).toMatchObject({ status: 'captured', amount });
    const total = payments.reduce((sum, p) => sum + p.amount, 0);
    expect(await balance('acc_chaos_1')).toBe(before - total);
    // The history process came back; nothing else died.
    expect(stack.running('temporal-history-1')).toBe(true);
    expect(stack.unexpectedExits()).toEqual({});
  }, 600_000);
});
