import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { expectProblem, networkError, sleep, startReservations, uniqueKey, type Reservations } from './helpers.js';

let rsv: Reservations;
beforeAll(async () => {
  rsv = await startReservations({ faults: true });
});
afterAll(async () => {
  await rsv.close();
});

/** Clears every fault, then sets these; returns a fresh SKU with 10 available. */
async function fresh(faults: Record<string, unknown> = {}): Promise<string> {
  const sku = await rsv.newSku(10);
  const res = await rsv.putFaults({ ...NO_FAULTS, ...faults });
  expect(res.status).toBe(200);
  return sku;
}

const LOST = /ECONNRESET|UND_ERR_SOCKET|EPIPE/;

describe('fault injection (SANDBOX_FAULTS=1)', () => {
  it('PUT /_faults changes only the fields sent; GET shows the current faults; bad fields are 400', async () => {
    await fresh();
    expect((await rsv.putFaults({ delayMs: 5 })).body).toEqual({
      dropResponseAfterCommit: 0,
      crashAfterCommit: 0,
      failBeforeCommit: 0,
      delayMs: 5,
      down: false,
    });
    await rsv.putFaults({ failBeforeCommit: 0.25 });
    expect((await rsv.call('GET', '/_faults')).body).toEqual({
      dropResponseAfterCommit: 0,
      crashAfterCommit: 0,
      failBeforeCommit: 0.25,
      delayMs: 5,
      down: false,
    });
    expectProblem(await rsv.putFaults({ dropResponse: 1 }), 400, 'invalid_request');
    expectProblem(await rsv.putFaults({ failBeforeCommit: 1.5 }), 400, 'invalid_request');
    expectProblem(await rsv.putFaults({ crashAfterCommit: 2 }), 400, 'invalid_request');
    expect((await rsv.call('GET', '/_faults')).body).toMatchObject({ failBeforeCommit: 0.25, delayMs: 5 });
  });

  it('when the response is dropped after commit, the hold stands and the retry replays the stored 201: one hold', async () => {
    const sku = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 3 }] };

    const lost = await networkError(rsv.hold(key, body));

    expect(lost).toMatch(LOST);
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

    expect(await networkError(rsv.confirm(key))).toMatch(LOST);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 6, held: 0 });
    expect((await rsv.confirm(key)).body).toEqual({ key, reservationId: hold.body.id, status: 'confirmed' });

    expect(await networkError(rsv.release(key))).toMatch(LOST);
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

    expect(await networkError(rsv.hold(key, { items: [{ sku, quantity: 1 }] }))).toMatch(LOST);
    expect(await networkError(rsv.confirm(key))).toMatch(LOST);
    expect(await networkError(rsv.release(key))).toMatch(LOST);

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

  it('draws fault probabilities from the injected random source', async () => {
    const draws = [0.5, 0.2];
    const seeded = await startReservations({ faults: true, random: () => draws.shift() ?? 0.99 });
    try {
      await seeded.putFaults({ dropResponseAfterCommit: 0.3 });
      const kept = await seeded.hold(uniqueKey(), { items: [{ sku: 'sku_pen', quantity: 1 }] }); // draws 0.5
      const dropped = await networkError(seeded.hold(uniqueKey(), { items: [{ sku: 'sku_pen', quantity: 1 }] })); // 0.2
      expect(kept.status).toBe(201);
      expect(dropped).toMatch(LOST);
      expect(await seeded.stock('sku_pen')).toEqual({ sku: 'sku_pen', available: 998, held: 2 });
    } finally {
      await seeded.close();
    }
  });
});

describe('shutting down', () => {
  it('ends injected delays at once with 503 shutting_down, nothing held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysafe-rsv-'));
    const closing = await startReservations({ faults: true, dir });
    await closing.putFaults({ delayMs: 60_000 });
    const key = uniqueKey();
    const started = Date.now();
    const slow = closing.hold(key, { items: [{ sku: 'sku_book', quantity: 1 }] });
    await sleep(100);

    await closing.close();

    expectProblem(await slow, 503, 'shutting_down');
    expect(Date.now() - started).toBeLessThan(5_000);
    const db = openDatabase(closing.dbPath);
    try {
      expect(db.prepare('SELECT available, held FROM inventory WHERE sku = ?').get('sku_book')).toEqual({
        available: 100,
        held: 0,
      });
      expect(db.prepare('SELECT count(*) AS n FROM reservations WHERE key = ?').get(key)).toEqual({ n: 0 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('without SANDBOX_FAULTS', () => {
  it('has no /_faults routes, and effects run untouched', async () => {
    const plain = await startReservations({ faults: false });
    try {
      expectProblem(await plain.call('GET', '/_faults'), 404, 'not_found');
      expectProblem(await plain.putFaults({ down: true }), 404, 'not_found');
      const key = uniqueKey();
      expect((await plain.hold(key, { items: [{ sku: 'sku_rare', quantity: 1 }] })).status).toBe(201);
      expect((await plain.confirm(key)).status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
