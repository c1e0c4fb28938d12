// Every branch of the checkout saga, on the time-skipping test server with scripted
// activities: which compensations run, in which order, on which keys, and what readers of
// the operation see (outcome, memo, search attributes, the Temporal UI's summaries and
// current details). Deadlines, back-offs and the attention timer pass in server time.
import { describe, expect, it } from 'vitest';
import { programFor } from '../../common/programs.js';
import { checkout } from '../../workflows/definitions/checkout.js';
import {
  activityOrder,
  CHECKOUT_RAN_THEN_UNDONE,
  CART,
  expectFailed,
  CHARGE,
  runSaga,
  useTimeSkipping,
  statuses,
} from './time-skipping.js';

const env = useTimeSkipping();

describe('checkout saga', () => {
  it('holds, charges and confirms under the derived keys, and succeeds with both ids', async () => {
    const run = await runSaga(env, 'checkout', { request: CART });
    const { operation } = run;
    const [reserveKey, chargeKey] = [`acme/${operation.key}/reserve`, `acme/${operation.key}/charge`];
    expect(run.outcome).toEqual({
      status: 'succeeded',
      result: { chargeId: 'ch_1', reservationId: 'res_1' },
      type: 'checkout',
      key: operation.key,
      createdAt: run.startTime.toISOString(),
      step: 'confirm_reservation',
      needsAttention: false,
      version: programFor(checkout).version,
      steps: [
        { name: 'reserve_items', status: 'completed', downstreamKey: reserveKey },
        { name: 'charge_payment', status: 'completed', downstreamKey: chargeKey },
        { name: 'confirm_reservation', status: 'completed', downstreamKey: reserveKey },
      ],
    });
    expect(run.calls).toEqual([
      {
        activity: 'reserve_items',
        operation,
        downstreamKey: reserveKey,
        request: { items: CART.items, ttlSeconds: 900 },
        attempt: 1,
      },
      { activity: 'charge_payment', operation, downstreamKey: chargeKey, request: CHARGE, attempt: 1 },
      { activity: 'confirm_reservation', operation, downstreamKey: reserveKey, attempt: 1 },
    ]);
    expect(run.summaries).toEqual([
      `reserve_items · reservations key \`${reserveKey}\``,
      `charge_payment · bank key \`${chargeKey}\``,
      `confirm_reservation · reservations key \`${reserveKey}\``,
    ]);
    expect(run.scheduled).toEqual([]);
    expect(run.memo).toEqual({ step: 'confirm_reservation', steps: run.outcome.steps });
    expect(run.searchAttributes).toEqual({ status: 'succeeded', step: 'confirm_reservation', needsAttention: undefined });
  });

  it('sends the hold lifetime the operation was started with', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, definitionSettings: { holdTtlSeconds: 42 } });
    expect(run.calls[0]).toMatchObject({ activity: 'reserve_items', request: { items: CART.items, ttlSeconds: 42 } });
  });

  describe('a business error', () => {
    it('at reserve_items (out_of_stock): nothing to compensate', async () => {
      const run = await runSaga(env, 'checkout', { request: CART, script: { reserve_items: { refuse: 'out_of_stock' } } });
      expectFailed(run, 'out_of_stock', []);
      expect(statuses(run)).toBe('reserve_items:failed charge_payment:pending confirm_reservation:pending');
      expect(activityOrder(run.calls)).toEqual(['reserve_items']);
      expect(run.searchAttributes).toMatchObject({ status: 'failed', step: 'reserve_items' });
    });

    it('at charge_payment (insufficient_funds): releases the reservation only', async () => {
      const run = await runSaga(env, 'checkout', { request: CART, script: { charge_payment: { refuse: 'insufficient_funds' } } });
      expectFailed(
        run,
        'insufficient_funds',
        ['release_reservation'],
        'charge_payment: refused (insufficient_funds); release_reservation undid reserve_items',
      );
      expect(statuses(run)).toBe('reserve_items:compensated charge_payment:failed confirm_reservation:pending');
      expect(activityOrder(run.calls)).toEqual(['reserve_items', 'charge_payment', 'release_reservation']);
      expect(run.calls.at(-1)).toMatchObject({
        activity: 'release_reservation',
        downstreamKey: `acme/${run.operation.key}/reserve`,
      });
    });

    it('at confirm_reservation (reservation_expired): reverses the charge, then releases the reservation', async () => {
      const run = await runSaga(env, 'checkout', {
        request: CART,
        script: { confirm_reservation: { refuse: 'reservation_expired' } },
      });
      const { key } = run.operation;
      expectFailed(run, 'reservation_expired', ['reverse_charge', 'release_reservation']);
      expect(statuses(run)).toBe('reserve_items:compensated charge_payment:compensated confirm_reservation:failed');
      expect(activityOrder(run.calls)).toEqual(CHECKOUT_RAN_THEN_UNDONE);
      expect(run.summaries.slice(3)).toEqual([
        `reverse_charge · bank key \`acme/${key}/charge\``,
        `release_reservation · reservations key \`acme/${key}/reserve\``,
      ]);
    });
  });

  describe('an outcome still unknown at the deadline', () => {
    it('of reserve_items: fences the hold, and the charge a lost task may have made; fails inventory_unavailable', async () => {
      const run = await runSaga(env, 'checkout', { request: CART, script: { reserve_items: 'unavailable' } });
      // The charge was never reached in this run, but a lost workflow task may have made it
      // locally after a reserve that succeeded then: its key is fenced too.
      expectFailed(run, 'inventory_unavailable', ['reverse_charge', 'release_reservation']);
      expect(statuses(run)).toBe('reserve_items:fenced charge_payment:fenced confirm_reservation:pending');
      expect(activityOrder(run.calls)).toEqual(['reserve_items', 'reverse_charge', 'release_reservation']);
      expect(run.calls.find((c) => c.activity === 'reverse_charge')?.downstreamKey).toBe(`acme/${run.operation.key}/charge`);
      expect(new Set(run.calls.filter((c) => c.activity !== 'reverse_charge').map((c) => c.downstreamKey))).toEqual(
        new Set([`acme/${run.operation.key}/reserve`]),
      );
    });

    it('of charge_payment: fences the charge with reverse_charge, then releases the reservation; fails payment_unavailable', async () => {
      const run = await runSaga(env, 'checkout', { request: CART, script: { charge_payment: 'unavailable' } });
      expectFailed(run, 'payment_unavailable', ['reverse_charge', 'release_reservation']);
      expect(statuses(run)).toBe('reserve_items:compensated charge_payment:fenced confirm_reservation:pending');
      expect(activityOrder(run.calls)).toEqual(['reserve_items', 'charge_payment', 'reverse_charge', 'release_reservation']);
    });

    it('of confirm_reservation (no compensation of its own): still reverses the charge, then releases the reservation', async () => {
      const run = await runSaga(env, 'checkout', { request: CART, script: { confirm_reservation: 'unavailable' } });
      expectFailed(run, 'inventory_unavailable', ['reverse_charge', 'release_reservation']);
      expect(statuses(run)).toBe('reserve_items:compensated charge_payment:compensated confirm_reservation:fenced');
      expect(activityOrder(run.calls)).toEqual(CHECKOUT_RAN_THEN_UNDONE);
      expect(run.details).toContain(
        'compensations ran: reverse_charge undid charge_payment; release_reservation undid reserve_items',
      );
      expect(run.memo.steps).toEqual(run.outcome.steps);
    });
  });

  describe('a compensation that keeps failing', () => {
    /** A checkout whose charge is declined, and whose release of the hold then fails `times` times, a minute to attention. */
    const releaseFailing = (times: number) =>
      runSaga(env, 'checkout', {
        request: CART,
        script: {
          charge_payment: { refuse: 'insufficient_funds' },
          release_reservation: { failFirst: times, as: 'unavailable' },
        },
        settings: { attentionAfterMs: 60_000 },
      });

    it('past attentionAfterMs raises NeedsAttention (memo and search attribute), keeps retrying, and completes', async () => {
      const run = await releaseFailing(8);
      expectFailed(run, 'insufficient_funds', ['release_reservation']);
      expect(run.calls.filter((c) => c.activity === 'release_reservation').map((c) => c.attempt)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
      expect(run.memo.needsAttention).toBe(true);
      expect(run.searchAttributes.needsAttention).toBe(true);
      expect(run.outcome.needsAttention).toBe(true);
      expect(run.details).toContain('**needs attention**');
    });

    it('for less than attentionAfterMs does not raise NeedsAttention', async () => {
      const run = await releaseFailing(2);
      expectFailed(run, 'insufficient_funds', ['release_reservation']);
      expect(run.memo.needsAttention).toBeUndefined();
      expect(run.searchAttributes.needsAttention).toBeUndefined();
      expect(run.outcome.needsAttention).toBe(false);
    });

    it('even non-retryably is run again by the workflow until it succeeds', async () => {
      const run = await runSaga(env, 'checkout', {
        request: CART,
        script: { confirm_reservation: { refuse: 'reservation_expired' }, reverse_charge: { failFirst: 3, as: 'non-retryable' } },
      });
      expectFailed(run, 'reservation_expired', ['reverse_charge', 'release_reservation']);
      // Each re-run is a new activity (attempt 1), scheduled again by the workflow.
      expect(run.calls.filter((c) => c.activity === 'reverse_charge').map((c) => c.attempt)).toEqual([1, 1, 1, 1]);
      expect(run.summaries.filter((s) => s.startsWith('reverse_charge'))).toHaveLength(4);
      expect(activityOrder(run.calls).slice(-2)).toEqual(['reverse_charge', 'release_reservation']);
    });
  });
});
