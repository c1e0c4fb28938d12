// A cancel at every step boundary of both sagas, the end of the last step included, on the
// time-skipping test server: the step in flight finishes (it is never cut off), no new step
// starts, the registered compensations run in reverse, and the workflow RETURNS a failed
// outcome with code `cancelled` (it does not end as a cancelled execution: result() would
// throw). A cancel the API accepted always ends cancelled: whatever else stopped the saga
// meanwhile (a refusal, a fence) is told in the message.
//
// Steps make their first attempt as local activities, inside the workflow task. A cancel
// that arrives while such a task runs makes Temporal refuse the task's completion when
// it closes the workflow; the task is run again from history, which shows the cancel
// before the steps whose local results were never recorded. So a cancel fences every step
// it stops before that has a compensation (keyed: a step that never ran is refused if it
// arrives later), and the money and the stock always agree with the outcome: nothing
// charged, nothing held. Each compensation's answer tells whether its step had in fact run
// (undone: compensated) or not (a tombstone: fenced), and the outcome says which. The
// scripted downstreams keep that ledger as the real ones do. These tests pin down each case.
import { describe, expect, it } from 'vitest';
import {
  activityOrder,
  CANCEL_REASON,
  CART,
  CHARGE,
  CHECKOUT_RAN_THEN_UNDONE,
  expectFailed,
  runSaga,
  statuses,
  useTimeSkipping,
  type ActivityName,
  type SagaRun,
} from './time-skipping.js';
import type { OperationType } from '../../workflows/contracts.js';

const env = useTimeSkipping();

/** A run the cancel ended: failed `cancelled` with these compensations (and this message, when given), the cancel recorded. */
function expectCancelled(run: SagaRun, compensations: string[], message?: string | RegExp): void {
  expectFailed(run, 'cancelled', compensations, message);
  expect(run.outcome.cancelRequested).toBe(true);
}

/** A run whose `activity` fails its local first attempt, and is cancelled while its regular retry runs (and then succeeds). */
function cancelledWhileRetried(type: OperationType, request: Record<string, unknown>, activity: ActivityName) {
  return runSaga(env, type, {
    request,
    cancel: { activity, call: 2 },
    script: { [activity]: { failFirst: 1, as: 'unavailable' } },
  });
}

describe('payment, cancelled', () => {
  it('before its step: the charge is fenced by its reversal, and the details say who asked and when', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'start' });
    const chargeKey = `acme/${run.operation.key}/charge`;
    expectCancelled(
      run,
      ['reverse_charge'],
      `the operation was cancelled before any outcome of charge_payment was recorded (cancel requested ${CANCEL_REASON}); ` +
        'reverse_charge fenced charge_payment, which had not taken effect (a tombstone refuses it for good)',
    );
    expect(run.outcome.steps).toMatchObject([{ name: 'charge_payment', status: 'fenced', downstreamKey: chargeKey }]);
    expect(run.calls.map((c) => [c.activity, c.downstreamKey])).toEqual([['reverse_charge', chargeKey]]);
    expect(run.searchAttributes).toMatchObject({ status: 'failed' });
    expect(run.details).toContain(`**cancel requested** ${CANCEL_REASON} · noticed `);
  });

  it('while its only step runs: the task that charged locally is refused, so the charge is fenced, and found and reversed', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'charge_payment' });
    expectCancelled(run, ['reverse_charge'], /; reverse_charge undid charge_payment$/);
    // The charge had been made (by the refused task): undone, not merely fenced.
    expect(statuses(run)).toBe('charge_payment:compensated');
    expect(activityOrder(run.calls)).toEqual(['charge_payment', 'reverse_charge']);
    expect(new Set(run.calls.map((c) => c.downstreamKey))).toEqual(new Set([`acme/${run.operation.key}/charge`]));
  });

  it('while its only step is retried as a regular activity and then succeeds: the charge is reversed, the payment cancelled', async () => {
    const run = await cancelledWhileRetried('payment', CHARGE, 'charge_payment');
    expectCancelled(
      run,
      ['reverse_charge'],
      `the operation was cancelled after charge_payment, its last step (cancel requested ${CANCEL_REASON}); ` +
        'reverse_charge undid charge_payment',
    );
    expect(statuses(run)).toBe('charge_payment:compensated');
    // The local attempt, the regular retry (cancel requested while it ran), then the reversal.
    expect(run.calls.map((c) => c.activity)).toEqual(['charge_payment', 'charge_payment', 'reverse_charge']);
    expect(run.scheduled).toEqual(['charge_payment', 'reverse_charge']);
    expect(run.searchAttributes).toMatchObject({ status: 'failed' });
  });
});

describe('checkout, cancelled', () => {
  it('before reserve_items: the hold and the charge are fenced, nothing else is called', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'start' });
    expectCancelled(
      run,
      ['reverse_charge', 'release_reservation'],
      `the operation was cancelled before any outcome of reserve_items was recorded (cancel requested ${CANCEL_REASON}); ` +
        'reverse_charge fenced charge_payment, which had not taken effect (a tombstone refuses it for good); ' +
        'release_reservation fenced reserve_items, which had not taken effect (a tombstone refuses it for good)',
    );
    expect(statuses(run)).toBe('reserve_items:fenced charge_payment:fenced confirm_reservation:pending');
    expect(activityOrder(run.calls)).toEqual(['reverse_charge', 'release_reservation']);
  });

  it.each(['reserve_items', 'charge_payment', 'confirm_reservation'] as const)(
    'while %s runs: the steps run locally in one task, which is refused; all are fenced, found made, and undone in reverse',
    async (activity) => {
      const run = await runSaga(env, 'checkout', { request: CART, cancel: activity });
      expectCancelled(run, ['reverse_charge', 'release_reservation']);
      // The refused task had held and charged: the compensations found both and undid them.
      expect(statuses(run)).toBe('reserve_items:compensated charge_payment:compensated confirm_reservation:pending');
      // Release undoes a confirmed reservation too: the stock comes back with the money.
      expect(activityOrder(run.calls)).toEqual(CHECKOUT_RAN_THEN_UNDONE);
      expect(run.details).toContain(
        'compensations ran: reverse_charge undid charge_payment; release_reservation undid reserve_items',
      );
    },
  );

  it('while its last step is retried as a regular activity and then succeeds: everything is undone, the checkout cancelled', async () => {
    const run = await cancelledWhileRetried('checkout', CART, 'confirm_reservation');
    expectCancelled(
      run,
      ['reverse_charge', 'release_reservation'],
      `the operation was cancelled after confirm_reservation, its last step (cancel requested ${CANCEL_REASON}); ` +
        'reverse_charge undid charge_payment; release_reservation undid reserve_items',
    );
    expect(statuses(run)).toBe('reserve_items:compensated charge_payment:compensated confirm_reservation:completed');
    expect(activityOrder(run.calls)).toEqual(CHECKOUT_RAN_THEN_UNDONE);
    expect(run.scheduled).toEqual(['confirm_reservation', 'reverse_charge', 'release_reservation']);
  });

  it('while a charge is refused: the operation ends cancelled, and says the charge had been refused', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'charge_payment',
      script: { charge_payment: { refuse: 'insufficient_funds' } },
    });
    expectCancelled(
      run,
      ['release_reservation'],
      `cancel requested ${CANCEL_REASON}; before it took hold: insufficient_funds (charge_payment: refused (insufficient_funds)); ` +
        'release_reservation undid reserve_items',
    );
    expect(activityOrder(run.calls)).toEqual(['reserve_items', 'charge_payment', 'release_reservation']);
  });

  it('while a charge keeps failing: it is not cut off but retried to its deadline, then fenced; the operation ends cancelled', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'charge_payment',
      script: { charge_payment: 'unavailable' },
    });
    expectCancelled(run, ['reverse_charge', 'release_reservation'], /before it took hold: payment_unavailable/);
    // Every attempt up to the 60 s deadline ran (back-off 250 ms doubling to 5 s): a cancel does not stop a step.
    expect(run.calls.filter((c) => c.activity === 'charge_payment').length).toBeGreaterThan(10);
    expect(statuses(run)).toBe('reserve_items:compensated charge_payment:fenced confirm_reservation:pending');
  });

  it('while a compensation runs: the compensation is not cut off, and the operation ends cancelled', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'release_reservation',
      script: { charge_payment: { refuse: 'insufficient_funds' }, release_reservation: { failFirst: 2, as: 'unavailable' } },
    });
    expectCancelled(run, ['release_reservation'], /before it took hold: insufficient_funds/);
    expect(run.calls.filter((c) => c.activity === 'release_reservation').map((c) => c.attempt)).toEqual([1, 2, 3]);
  });
});
