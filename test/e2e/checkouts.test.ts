// The checkout saga end to end: API, dev server, worker, bank and reservation service, all
// real. Each test checks balances and inventory, not just the operation's status.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectFailedOperation, expectSucceeded, startApi } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { auditOperation } from '../support/invariants.js';
import { uniqueId } from '../support/stack.js';

const stack = useFullStack({ name: 'checkout-e2e', stepDeadlineMs: 3_000, attentionAfterMs: 2_000 });

async function setUp(balance: number, stock: number) {
  const account = uniqueId('acc');
  const sku = uniqueId('sku');
  await stack.bank.openAccount(account, balance);
  await stack.reservations.setStock(sku, stock);
  return { account, sku };
}

async function checkout(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return stack.api.request('POST', '/v1/checkouts', { body, headers: { 'idempotency-key': key, prefer: 'wait=30', ...headers } });
}

describe('POST /v1/checkouts', () => {
  it('holds, charges and confirms once: succeeded with chargeId and reservationId', async () => {
    const { account, sku } = await setUp(10_000, 10);
    const key = uniqueId('order');
    const body = { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 2 }] };
    const res = await checkout(key, body);
    expectSucceeded(res, 'checkout', key, [
      ['reserve_items', `default/${key}/reserve`],
      ['charge_payment', `default/${key}/charge`],
      ['confirm_reservation', `default/${key}/reserve`],
    ]);
    const result = res.body.result as Record<string, string>;
    expect(result.chargeId).toMatch(/^ch_/);
    expect(result.reservationId).toMatch(/^rsv_/);
    expect((await checkout(key, body)).headers.get('idempotent-replayed')).toBe('true');
    expect(await stack.bank.balance(account)).toBe(5_800);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 8, held: 0 });
    expect((await stack.reservations.reservation(`default/${key}/reserve`)).body.status).toBe('confirmed');
  });

  it('answers a new operation with the resource a later read of its execution gives, succeeded or failed', async () => {
    // The first answer is built from the workflow's return value and close time alone; an
    // instance without a cache reads the execution (description and result) instead.
    const reader = await startApi({ taskQueue: stack.taskQueue, env: { RETRYSAFE_CACHE_SIZE: '0' } });
    try {
      const { account, sku } = await setUp(5_000, 10);
      for (const amount of [1_000, 9_000]) {
        const key = uniqueId('order');
        const first = await checkout(key, { account, amount, currency: 'EUR', items: [{ sku, quantity: 1 }] });
        expect(first.status).toBe(200);
        expect(first.body.status).toBe(amount === 1_000 ? 'succeeded' : 'failed');
        const read = await reader.request('GET', `/v1/operations/${key}`);
        expect(read.status).toBe(200);
        expect(read.body).toEqual(first.body);
        expect(first.body.completedAt).not.toBeNull();
      }
    } finally {
      await reader.close();
    }
  });

  it('when out of stock, fails with out_of_stock, charges nothing and holds nothing', async () => {
    const { account, sku } = await setUp(10_000, 1);
    const key = uniqueId('order');
    const res = await checkout(key, { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 2 }] });
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'out_of_stock', compensations: [] } });
    expect(await stack.bank.balance(account)).toBe(10_000);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 1, held: 0 });
    expect((await stack.bank.charge(`default/${key}/charge`)).status).toBe(404);
  });

  it('when the charge is declined, releases the reservation', async () => {
    const { account, sku } = await setUp(100, 5);
    const key = uniqueId('order');
    const res = await checkout(key, { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 2 }] });
    expectFailedOperation(
      res.body,
      'insufficient_funds',
      ['release_reservation'],
      'reserve_items:compensated charge_payment:failed confirm_reservation:pending',
    );
    expect(await stack.bank.balance(account)).toBe(100);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 5, held: 0 });
    expect((await stack.reservations.reservation(`default/${key}/reserve`)).body.status).toBe('released');
  });

  it('when the hold expires before confirmation, fails with reservation_expired and reverses the charge', async () => {
    const shortHolds = await startApi({
      taskQueue: stack.taskQueue,
      stepDeadlineMs: 10_000,
      settings: 'checkout.holdTtlSeconds=1',
    });
    try {
      const { account, sku } = await setUp(10_000, 5);
      const key = uniqueId('order');
      // The charge takes longer than the hold lives.
      await stack.bank.setFaults({ delayMs: 1_600 });
      const res = await shortHolds.request('POST', '/v1/checkouts', {
        headers: { 'idempotency-key': key, prefer: 'wait=30' },
        body: { account, amount: 1_000, currency: 'EUR', items: [{ sku, quantity: 1 }] },
      });
      expect(res.body).toMatchObject({
        status: 'failed',
        error: { code: 'reservation_expired', compensations: ['reverse_charge', 'release_reservation'] },
      });
      expect((await stack.bank.charge(`default/${key}/charge`)).body.status).toBe('reversed');
      expect(await stack.bank.balance(account)).toBe(10_000);
      expect(await stack.reservations.stock(sku)).toEqual({ available: 5, held: 0 });
    } finally {
      await stack.bank.setFaults({ delayMs: 0 });
      await shortHolds.close();
    }
  });

  it('when the bank is unreachable past the charge deadline, fences the charge and releases the hold', async () => {
    const { account, sku } = await setUp(10_000, 5);
    const key = uniqueId('order');
    await stack.bank.withFaults({ down: true }, async () => {
      const started = await checkout(
        key,
        { account, amount: 700, currency: 'EUR', items: [{ sku, quantity: 1 }] },
        { prefer: 'respond-async' },
      );
      expect(started.status).toBe(202);
      // Down a little past the 3 s deadline of charge_payment (reserve took a moment too).
      await sleep(4_000);
    });
    const final = await stack.api.waitTerminal(key);
    expectFailedOperation(
      final,
      'payment_unavailable',
      ['reverse_charge', 'release_reservation'],
      'reserve_items:compensated charge_payment:fenced confirm_reservation:pending',
    );
    // A late original of the charge is refused: the fence left a tombstone under its key.
    expect((await stack.bank.postCharge(`default/${key}/charge`, { account, amount: 700, currency: 'EUR' })).status).toBe(410);
    expect(await stack.bank.balance(account)).toBe(10_000);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 5, held: 0 });
  });

  it('with half the responses lost at both services, 30 concurrent checkouts all end consistent', async () => {
    const { account, sku } = await setUp(1_000_000, 20);
    await Promise.all([
      stack.bank.setFaults({ dropResponseAfterCommit: 0.5 }),
      stack.reservations.setFaults({ dropResponseAfterCommit: 0.5 }),
    ]);
    const lossy = await startApi({ taskQueue: stack.taskQueue, stepDeadlineMs: 30_000 });
    try {
      const ops = Array.from({ length: 30 }, (_, i) => ({ key: uniqueId(`lossy${i}`), amount: 100 + i }));
      const answers = await Promise.all(
        ops.map((op) =>
          lossy.request('POST', '/v1/checkouts', {
            headers: { 'idempotency-key': op.key, prefer: 'wait=60' },
            body: { account, amount: op.amount, currency: 'EUR', items: [{ sku, quantity: 1 }] },
          }),
        ),
      );
      const violations: string[] = [];
      for (const [i, op] of ops.entries()) {
        const operation = answers[i]!.status === 200 ? answers[i]!.body : await lossy.waitTerminal(op.key, undefined, 90_000);
        violations.push(
          ...(await auditOperation(
            { workflowId: `default/${op.key}`, type: 'checkout', amount: op.amount, operation },
            stack.bank,
            stack.reservations,
          )),
        );
      }
      expect(violations).toEqual([]);
      // 20 in stock, 30 wanted: exactly 20 succeed, 10 fail out_of_stock, money matches.
      const finals = await Promise.all(ops.map((op) => lossy.waitTerminal(op.key)));
      const succeeded = finals.filter((f) => f.status === 'succeeded');
      expect(succeeded).toHaveLength(20);
      expect(finals.filter((f) => (f.error as { code?: string } | undefined)?.code === 'out_of_stock')).toHaveLength(10);
      const charged = ops.filter((_, i) => finals[i]!.status === 'succeeded').reduce((sum, op) => sum + op.amount, 0);
      expect(await stack.bank.balance(account)).toBe(1_000_000 - charged);
      expect(await stack.reservations.stock(sku)).toEqual({ available: 0, held: 0 });
    } finally {
      await Promise.all([
        stack.bank.setFaults({ dropResponseAfterCommit: 0 }),
        stack.reservations.setFaults({ dropResponseAfterCommit: 0 }),
      ]);
      await lossy.close();
    }
  });

  it("when a compensation's service is down, keeps retrying, shows NeedsAttention, then completes", async () => {
    const { account, sku } = await setUp(100, 5);
    const key = uniqueId('order');
    // The charge will be declined slowly, and the reservation service is down by then.
    await stack.bank.setFaults({ delayMs: 1_500 });
    const started = await checkout(
      key,
      { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 1 }] },
      { prefer: 'respond-async' },
    );
    expect(started.status).toBe(202);
    for (let i = 0; i < 40 && (await stack.reservations.reservation(`default/${key}/reserve`)).status !== 200; i++) {
      await sleep(50);
    }
    await stack.reservations.setFaults({ down: true });
    try {
      let seen: Record<string, unknown> = {};
      for (let i = 0; i < 60; i++) {
        seen = (await stack.api.request('GET', `/v1/operations/${key}`)).body;
        if (seen.needsAttention === true) break;
        await sleep(250);
      }
      expect(seen).toMatchObject({ status: 'processing', needsAttention: true });
      expect((await stack.reservations.stock(sku)).held).toBe(1);
    } finally {
      await stack.reservations.setFaults({ down: false });
      await stack.bank.setFaults({ delayMs: 0 });
    }
    const final = await stack.api.waitTerminal(key, undefined, 90_000);
    expect(final).toMatchObject({
      status: 'failed',
      needsAttention: true,
      error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
    });
    expect(await stack.reservations.stock(sku)).toEqual({ available: 5, held: 0 });
  });
});
