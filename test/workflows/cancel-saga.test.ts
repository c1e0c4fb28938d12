// A cancel at every step boundary of both sagas, on the time-skipping test server: the step
// in flight finishes (it is never cut off), no new step starts, the registered
// compensations run in reverse, and the workflow RETURNS a failed outcome with code
// `cancelled` (it does not end as a cancelled execution: result() would throw).
//
// Steps make their first attempt as local activities, inside the workflow task. A cancel
// that arrives while such a task runs makes Temporal refuse the task's completion when
// it closes the workflow; the task is run again from history, which shows the cancel
// before the steps whose local results were never recorded. So a cancel fences every step
// it stops before that has a compensation (keyed: a step that never ran is refused if it
// arrives later), and the money and the stock always agree with the outcome: nothing
// charged, nothing held. These tests pin down each case as it happens.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsufficientFundsError } from '../../activities/errors.js';
import { activityOrder, CANCEL_REASON, CART, CHARGE, runSaga, startTimeSkipping } from './time-skipping.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTimeSkipping();
});
afterAll(async () => {
  await env?.teardown();
});

const statuses = (steps: Array<{ name: string; status: string }>) => steps.map((s) => `${s.name}:${s.status}`);

describe('payment, cancelled', () => {
  it('before its step: the charge is fenced by its reversal, and the details say who asked and when', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'start' });
    const chargeKey = `acme/${run.operation.key}/charge`;
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'cancelled',
        message: `the operation was cancelled before charge_payment started (cancel requested ${CANCEL_REASON})`,
        compensations: ['reverse_charge'],
      },
      steps: [{ name: 'charge_payment', status: 'fenced', downstreamKey: chargeKey }],
      cancelRequested: true,
    });
    expect(run.calls.map((c) => [c.activity, c.downstreamKey])).toEqual([['reverseCharge', chargeKey]]);
    expect(run.searchAttributes).toMatchObject({ status: 'failed' });
    expect(run.details).toContain(`**cancel requested** ${CANCEL_REASON} · noticed `);
  });

  it('while its only step runs: the task that charged locally is refused, so the charge is fenced and reversed', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'chargePayment' });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'cancelled', compensations: ['reverse_charge'] },
      cancelRequested: true,
    });
    expect(activityOrder(run.calls)).toEqual(['chargePayment', 'reverseCharge']);
    expect(new Set(run.calls.map((c) => c.downstreamKey))).toEqual(new Set([`acme/${run.operation.key}/charge`]));
  });
});

describe('checkout, cancelled', () => {
  it('before reserve_items: the hold and the charge are fenced, nothing else is called', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'start' });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'cancelled',
        message: `the operation was cancelled before reserve_items started (cancel requested ${CANCEL_REASON})`,
        compensations: ['reverse_charge', 'release_reservation'],
      },
    });
    expect(statuses(run.outcome.steps)).toEqual(['reserve_items:fenced', 'charge_payment:fenced', 'confirm_reservation:pending']);
    expect(activityOrder(run.calls)).toEqual(['reverseCharge', 'releaseReservation']);
  });

  it.each(['reserveItems', 'chargePayment', 'confirmReservation'] as const)(
    'while %s runs: the steps run locally in one task, which is refused; all are fenced and undone in reverse',
    async (activity) => {
      const run = await runSaga(env, 'checkout', { request: CART, cancel: activity });
      expect(run.outcome).toMatchObject({
        status: 'failed',
        error: { code: 'cancelled', compensations: ['reverse_charge', 'release_reservation'] },
        cancelRequested: true,
      });
      expect(statuses(run.outcome.steps)).toEqual([
        'reserve_items:fenced',
        'charge_payment:fenced',
        'confirm_reservation:pending',
      ]);
      // Release undoes a confirmed reservation too: the stock comes back with the money.
      expect(activityOrder(run.calls)).toEqual([
        'reserveItems',
        'chargePayment',
        'confirmReservation',
        'reverseCharge',
        'releaseReservation',
      ]);
      expect(run.details).toContain('compensations ran: reverse_charge, release_reservation');
    },
  );

  it('while a charge is refused: the refusal is the outcome, as without the cancel', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'chargePayment',
      script: { chargePayment: InsufficientFundsError },
    });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
      cancelRequested: true,
    });
    expect(activityOrder(run.calls)).toEqual(['reserveItems', 'chargePayment', 'releaseReservation']);
  });

  it('while a charge keeps failing: it is not cut off but retried to its deadline, then fenced', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'chargePayment',
      script: { chargePayment: 'unavailable' },
    });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge', 'release_reservation'] },
    });
    // Every attempt up to the 60 s deadline ran (back-off 250 ms doubling to 5 s): a cancel does not stop a step.
    expect(run.calls.filter((c) => c.activity === 'chargePayment').length).toBeGreaterThan(10);
    expect(statuses(run.outcome.steps)).toEqual([
      'reserve_items:compensated',
      'charge_payment:fenced',
      'confirm_reservation:pending',
    ]);
  });

  it('while a compensation runs: the compensation is not cut off', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      cancel: 'releaseReservation',
      script: { chargePayment: InsufficientFundsError, releaseReservation: { failFirst: 2, as: 'unavailable' } },
    });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
    });
    expect(run.calls.filter((c) => c.activity === 'releaseReservation').map((c) => c.attempt)).toEqual([1, 2, 3]);
  });
});
