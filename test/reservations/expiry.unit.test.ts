// Holds expire and give their stock back: in the transaction of the next request that
// writes, in the periodic sweep, and in every read in between.
import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ReservationLedger } from '../../downstream/reservations/ledger.js';
import { withService } from '../support/sandbox-harness.js';
import { expectProblem, manualClock, startReservations, uniqueKey, type Reservations } from './helpers.js';

const dbStock = (db: Database.Database, sku: string) =>
  db.prepare('SELECT sku, available, held FROM inventory WHERE sku = ?').get(sku);

/** Four of a fresh SKU of ten, held for a minute under a fresh key. */
async function heldForAMinute(rsv: Reservations) {
  const sku = await rsv.newSku(10);
  const key = uniqueKey();
  const hold = await rsv.hold(key, { items: [{ sku, quantity: 4 }], ttlSeconds: 60 });
  return { sku, key, id: hold.body.id };
}

describe('hold expiry', () => {
  it('a 1-second hold gives its stock back on its own; confirming it then is 422 reservation_expired', () =>
    withService(startReservations({ sweepIntervalMs: 50 }), async (rsv) => {
      const sku = await rsv.newSku(5);
      const key = uniqueKey();
      const hold = await rsv.hold(key, { items: [{ sku, quantity: 2 }], ttlSeconds: 1 });
      expect(hold.status).toBe(201);
      expect(await rsv.stock(sku)).toEqual({ sku, available: 3, held: 2 });

      await sleep(1_300);

      expect(await rsv.stock(sku)).toEqual({ sku, available: 5, held: 0 });
      // The sweep, not just the read, gave it back: the ledger itself says so.
      expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 5, held: 0 });
      expect(rsv.rows(key)).toMatchObject([{ status: 'expired' }]);
      expect((await rsv.view(key)).body).toMatchObject({ status: 'expired', reservationId: hold.body.id });

      expectProblem(await rsv.confirm(key), 422, 'reservation_expired');
      expect(await rsv.stock(sku)).toEqual({ sku, available: 5, held: 0 });
      const released = await rsv.release(key);
      expect(released.body).toEqual({ key, reservationId: hold.body.id, status: 'expired' });
      expect(await rsv.stock(sku)).toEqual({ sku, available: 5, held: 0 });
    }));

  describe('on a clock the test moves (no sweep between requests)', () => {
    type Clock = ReturnType<typeof manualClock>;
    const onClock = (test: (clock: Clock, rsv: Reservations) => Promise<void>) => () => {
      const clock = manualClock();
      // The sweep runs at start only: everything after that is the requests' own doing.
      return withService(startReservations({ now: clock.now, sweepIntervalMs: 3_600_000 }), (rsv) => test(clock, rsv));
    };

    it(
      'reads count a due hold as given back before anything writes, to the millisecond',
      onClock(async (clock, rsv) => {
        const { sku, key } = await heldForAMinute(rsv);

        clock.advance(59_999);
        expect(await rsv.stock(sku)).toEqual({ sku, available: 6, held: 4 });
        expect((await rsv.view(key)).body).toMatchObject({ status: 'held' });

        clock.advance(1);
        expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
        expect((await rsv.view(key)).body).toMatchObject({ status: 'expired' });
        // Nothing was written yet: the read is accurate on its own.
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 6, held: 4 });
        expect(rsv.rows(key)).toMatchObject([{ status: 'held' }]);
      }),
    );

    it(
      'confirm expires the due hold in its own transaction: 422 reservation_expired, stock back, once',
      onClock(async (clock, rsv) => {
        const { sku, key } = await heldForAMinute(rsv);
        clock.advance(60_000);

        const expired = expectProblem(await rsv.confirm(key), 422, 'reservation_expired');
        expect(expired.detail).toContain(key);
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 10, held: 0 });
        expect(rsv.rows(key)).toMatchObject([{ status: 'expired' }]);

        expectProblem(await rsv.confirm(key), 422, 'reservation_expired');
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 10, held: 0 });
      }),
    );

    it(
      'a confirm just in time keeps the stock for good; expiry no longer applies to it',
      onClock(async (clock, rsv) => {
        const { sku, key } = await heldForAMinute(rsv);
        clock.advance(59_999);
        expect((await rsv.confirm(key)).body).toMatchObject({ status: 'confirmed' });

        clock.advance(3_600_000);
        expect(await rsv.stock(sku)).toEqual({ sku, available: 6, held: 0 });
        expect((await rsv.confirm(key)).body).toMatchObject({ status: 'confirmed' });
        expect((await rsv.view(key)).body).toMatchObject({ status: 'confirmed' });
      }),
    );

    it(
      'release of a due hold answers expired and gives the stock back exactly once',
      onClock(async (clock, rsv) => {
        const { sku, key, id } = await heldForAMinute(rsv);
        clock.advance(61_000);

        const first = await rsv.release(key);
        const second = await rsv.release(key);

        expect(first.body).toEqual({ key, reservationId: id, status: 'expired' });
        expect(second.body).toEqual(first.body);
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 10, held: 0 });
      }),
    );

    it(
      'a new hold sees the stock of due holds, and PUT /inventory is not inflated by them later',
      onClock(async (clock, rsv) => {
        const sku = await rsv.newSku(5);
        await rsv.hold(uniqueKey(), { items: [{ sku, quantity: 5 }], ttlSeconds: 10 });
        expectProblem(await rsv.hold(uniqueKey(), { items: [{ sku, quantity: 1 }] }), 422, 'out_of_stock');

        clock.advance(10_000);
        const next = await rsv.hold(uniqueKey(), { items: [{ sku, quantity: 5 }], ttlSeconds: 10 });
        expect(next.status).toBe(201);
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 0, held: 5 });

        clock.advance(10_000);
        expect((await rsv.call('PUT', `/inventory/${sku}`, { body: { available: 3 } })).body).toEqual({
          sku,
          available: 3,
          held: 0,
        });
        expect(await rsv.stock(sku)).toEqual({ sku, available: 3, held: 0 });
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 3, held: 0 });
      }),
    );

    it(
      'the sweep expires what is due, and only that',
      onClock(async (clock, rsv) => {
        const sku = await rsv.newSku(10);
        const soon = uniqueKey();
        const later = uniqueKey();
        await rsv.hold(soon, { items: [{ sku, quantity: 1 }], ttlSeconds: 10 });
        await rsv.hold(later, { items: [{ sku, quantity: 2 }], ttlSeconds: 20 });
        clock.advance(15_000);

        // A second store on the same file: the sweep is a plain transaction, not app state.
        const store = new ReservationLedger(rsv.db, clock.now);
        expect(store.sweep()).toBe(1);
        expect(store.sweep()).toBe(0);

        expect(rsv.rows(soon)).toMatchObject([{ status: 'expired' }]);
        expect(rsv.rows(later)).toMatchObject([{ status: 'held' }]);
        expect(dbStock(rsv.db, sku)).toEqual({ sku, available: 8, held: 2 });
      }),
    );
  });
});
