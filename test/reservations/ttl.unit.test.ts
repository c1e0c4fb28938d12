import { describe, expect, it, vi } from 'vitest';
import { useTempDirs, withService } from '../support/sandbox-harness.js';
import { manualClock, startReservations, uniqueKey } from './helpers.js';

const tempDir = useTempDirs('rsv');

describe('idempotency key TTL', () => {
  it('purges expired keys; the key may then be used again while the ledger keeps the old reservation', () =>
    withService(startReservations({ keyTtlMs: 3_000 }), async (rsv) => {
      const sku = await rsv.newSku(10);
      const key = uniqueKey();
      const first = await rsv.hold(key, { items: [{ sku, quantity: 1 }] });
      expect(first.status).toBe(201);
      expect((await rsv.confirm(key)).status).toBe(200);
      expect((await rsv.hold(key, { items: [{ sku, quantity: 2 }] })).status).toBe(422);

      // The timer purges it, not just the lookup: wait for the row to go.
      await vi.waitFor(() => expect(rsv.keyRows(key)).toBe(0), { timeout: 15_000, interval: 50 });

      const reused = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });
      expect(reused.status).toBe(201);
      expect(reused.headers.get('idempotent-replayed')).toBe('false');
      expect(reused.body.id).not.toBe(first.body.id);
      expect(rsv.rows(key).map((r) => r.status)).toEqual(['confirmed', 'held']);
      expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 2 });
      // The key's current state is its latest reservation.
      expect((await rsv.view(key)).body).toMatchObject({ reservationId: reused.body.id, status: 'held' });
    }));

  it('a tombstone outlives its key: the late hold is still refused after the purge', () =>
    withService(startReservations({ keyTtlMs: 200 }), async (rsv) => {
      const sku = await rsv.newSku(10);
      const key = uniqueKey();
      await rsv.release(key);
      expect((await rsv.hold(key, { items: [{ sku, quantity: 1 }] })).status).toBe(410);
      // The timer purges it, not just the lookup: wait for the row to go.
      await vi.waitFor(() => expect(rsv.keyRows(key)).toBe(0), { timeout: 15_000, interval: 50 });
      const late = await rsv.hold(key, { items: [{ sku, quantity: 1 }] });
      expect(late.status).toBe(410);
      expect(late.headers.get('idempotent-replayed')).toBe('false');
      expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    }));

  it('the key window is exact on the service clock, and purging once at start clears what expired while down', async () => {
    const dir = tempDir();
    const clock = manualClock();
    const key = uniqueKey();
    const before = await startReservations({ dir, now: clock.now, keyTtlMs: 60_000 });
    await before.hold(key, { items: [{ sku: 'sku_pen', quantity: 1 }], ttlSeconds: 86_400 });
    clock.advance(59_999);
    expect(
      (await before.hold(key, { items: [{ sku: 'sku_pen', quantity: 1 }], ttlSeconds: 86_400 })).headers.get(
        'idempotent-replayed',
      ),
    ).toBe('true');
    expect(before.keyRows(key)).toBe(1);
    await before.close();

    clock.advance(1);
    await withService(startReservations({ dir, now: clock.now, keyTtlMs: 60_000 }), async (after) => {
      expect(after.keyRows(key)).toBe(0);
      expect(after.rows(key)).toMatchObject([{ status: 'held' }]);
      expect(await after.stock('sku_pen')).toEqual({ sku: 'sku_pen', available: 999, held: 1 });
    });
  });
});
