// Killing the worker process (SIGKILL) while payments are in flight loses none of them
// and charges none twice: Temporal holds the state, the bank deduplicates on the key.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import type { ChildHandle } from '../support/processes.js';
import { uniqueId } from '../support/stack.js';

const stack = useFullStack({ name: 'restart', worker: 'none', stepDeadlineMs: 60_000 });
const workers: ChildHandle[] = [];

function startWorkerProcess(): ChildHandle {
  const w = stack.spawnWorker({ LOG_LEVEL: 'info' });
  workers.push(w);
  return w;
}

afterAll(async () => {
  for (const w of workers) await w.kill('SIGKILL');
});

it('when the worker is killed mid-saga and a new one starts, every payment and checkout completes once', async () => {
  const account = uniqueId('acc');
  await stack.bank.openAccount(account, 100_000);
  const first = startWorkerProcess();
  await first.waitFor('worker ready', 120_000);
  // Slow bank: charges are in flight when the worker dies (each commits 8 s after it
  // arrives, answering a worker that is gone by then: a lost response).
  await stack.bank.setFaults({ delayMs: 8_000 });
  const sku = uniqueId('sku');
  await stack.reservations.setStock(sku, 100);
  const keys = Array.from({ length: 8 }, () => uniqueId('inflight'));
  const cartKeys = Array.from({ length: 4 }, () => uniqueId('cart'));
  for (const key of keys) {
    const res = await stack.api.request('POST', '/v1/payments', {
      headers: { 'idempotency-key': key, prefer: 'respond-async' },
      body: { account, amount: 1_000, currency: 'EUR' },
    });
    expect(res.status).toBe(202);
  }
  for (const key of cartKeys) {
    const res = await stack.api.request('POST', '/v1/checkouts', {
      headers: { 'idempotency-key': key, prefer: 'respond-async' },
      body: { account, amount: 500, currency: 'EUR', items: [{ sku, quantity: 3 }] },
    });
    expect(res.status).toBe(202);
  }
  // Kill once every checkout has its hold: its charge is then in flight too.
  for (let i = 0; i < 100; i++) {
    const holds = await Promise.all(cartKeys.map((k) => stack.reservations.reservation(`default/${k}/reserve`)));
    if (holds.every((h) => h.status === 200)) break;
    await sleep(100);
  }
  await first.kill('SIGKILL');
  // The kill really landed mid-saga: not every charge had been made yet.
  const capturedBeforeRestart = (
    await Promise.all(keys.map(async (key) => (await stack.bank.charge(`default/${key}/charge`)).status === 200))
  ).filter(Boolean).length;
  expect(capturedBeforeRestart).toBeLessThan(keys.length);
  await stack.bank.setFaults({ delayMs: 0 });

  const second = startWorkerProcess();
  await second.waitFor('worker ready', 120_000);
  for (const key of keys) {
    const final = await stack.api.waitTerminal(key, undefined, 90_000);
    expect(final.status).toBe('succeeded');
    expect((await stack.bank.charge(`default/${key}/charge`)).body).toMatchObject({ status: 'captured', amount: 1_000 });
  }
  for (const key of cartKeys) {
    const final = await stack.api.waitTerminal(key, undefined, 90_000);
    expect(final.status).toBe('succeeded');
    expect((await stack.reservations.reservation(`default/${key}/reserve`)).body.status).toBe('confirmed');
  }
  expect(await stack.bank.balance(account)).toBe(100_000 - keys.length * 1_000 - cartKeys.length * 500);
  expect(await stack.reservations.stock(sku)).toEqual({ available: 100 - cartKeys.length * 3, held: 0 });
});
