// What each injected fault does to the reservation service's holds, confirms and releases:
// a lost answer leaves the effect committed once for the retry to find, a failure before
// commit leaves nothing, a service that is down refuses the connection but still answers
// reads, and a delayed key is answered 409 to a second request. What the fault switch itself
// does is shared with the bank (sandboxes/faults.unit.test.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { expectProblem, LOST_ANSWER, networkError, startReservations, uniqueKey, useReservations } from './helpers.js';

const rsv = useReservations({ faults: true });

/** Clears every fault, then sets these; returns a fresh SKU with 10 available. */
async function fresh(faults: Record<string, unknown> = {}): Promise<string> {
  const sku = await rsv.newSku(10);
  const res = await rsv.putFaults({ ...NO_FAULTS, ...faults });
  expect(res.status).toBe(200);
  return sku;
}

describe('fault injection (SANDBOX_FAULTS=1)', () => {
  it('when the response is dropped after commit, the hold stands and the retry replays the stored 201: one hold', async () => {
    const sku = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 3 }] };

    const lost = await networkError(rsv.hold(key, body));

    expect(lost).toMatch(LOST_ANSWER);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 3 });
    // Still set to 1: only an answer that committed something is dropped, a replay is not.
    const retry = await rsv.hold(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ key, status: 'held', id: rsv.rows(key)[0]!.reservation_id });
    expect(rsv.rows(key)).toHaveLength(1);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 3 });
  });

  it('drops a committed confirm and a committed release too; their retries answer the same, moving stock once', async () => {
    const sku = await fresh();
    const key = uniqueKey();
    const hold = await rsv.hold(key, { items: [{ sku, quantity: 4 }] });
    await rsv.putFaults({ dropResponseAfterCommit: 1 });

    expect(await networkError(rsv.confirm(key))).toMatch(LOST_ANSWER);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 6, held: 0 });
    expect((await rsv.confirm(key)).body).toEqual({ key, reservationId: hold.body.id, status: 'confirmed' });

    expect(await networkError(rsv.release(key))).toMatch(LOST_ANSWER);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    expect((await rsv.release(key)).body).toEqual({ key, reservationId: hold.body.id, status: 'released' });
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
  });

  it('when failBeforeCommit fires, answers 503 injected_failure and does nothing; the key stays usable', async () => {
    const sku = await fresh({ failBeforeCommit: 1 });
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 1 }] };

    const failed = await rsv.hold(key, body);
    const failedRelease = await rsv.release(key);
    const failedConfirm = await rsv.confirm(key);

    expectProblem(failed, 503, 'injected_failure');
    expect(failed.headers.get('retry-after')).toBe('1');
    expectProblem(failedRelease, 503, 'injected_failure');
    expectProblem(failedConfirm, 503, 'injected_failure');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    expect(rsv.rows(key)).toEqual([]);
    expect(rsv.keyRows(key)).toBe(0);
    await rsv.putFaults({ failBeforeCommit: 0 });
    const retry = await rsv.hold(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
  });

  it('when down, effect requests get a connection error and nothing happens, while reads and set-up still answer', async () => {
    const sku = await fresh({ down: true });
    const key = uniqueKey();

    expect(await networkError(rsv.hold(key, { items: [{ sku, quantity: 1 }] }))).toMatch(LOST_ANSWER);
    expect(await networkError(rsv.confirm(key))).toMatch(LOST_ANSWER);
    expect(await networkError(rsv.release(key))).toMatch(LOST_ANSWER);

    expect((await rsv.call('GET', '/healthz')).status).toBe(200);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    expect((await rsv.call('PUT', `/inventory/${sku}`, { body: { available: 11 } })).status).toBe(200);
    expectProblem(await rsv.view(key), 404, 'reservation_not_found');
    expect(rsv.rows(key)).toEqual([]);
    expect(rsv.keyRows(key)).toBe(0);
    expect((await rsv.putFaults({ down: false })).status).toBe(200);
    expect((await rsv.hold(key, { items: [{ sku, quantity: 1 }] })).status).toBe(201);
  });

  it('while a key is delayed in flight, a second request for it gets 409 request_in_progress; reads are never delayed', async () => {
    const sku = await fresh({ delayMs: 400 });
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 2 }] };

    const started = Date.now();
    const slow = rsv.hold(key, body);
    await sleep(100);
    const concurrent = await rsv.hold(key, body);
    const read = await rsv.call('GET', `/inventory/${sku}`);
    const readAt = Date.now() - started;
    const first = await slow;

    const problem = expectProblem(concurrent, 409, 'request_in_progress');
    expect(problem.detail).toMatch(/retry/);
    expect(concurrent.headers.get('retry-after')).toBe('1');
    expect(read.status).toBe(200);
    expect(readAt).toBeLessThan(400);
    expect(first.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    await rsv.putFaults({ delayMs: 0 });
    const retry = await rsv.hold(key, body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 8, held: 2 });
  });
});

describe('without SANDBOX_FAULTS', () => {
  it('a hold and its confirm run untouched', async () => {
    const plain = await startReservations({ faults: false });
    try {
      const key = uniqueKey();
      expect((await plain.hold(key, { items: [{ sku: 'sku_rare', quantity: 1 }] })).status).toBe(201);
      expect((await plain.confirm(key)).status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
