// A cancel at every step boundary of both sagas, on the time-skipping test server: the step
// in flight finishes (it is never cut off), no new step starts, the registered
// compensations run in reverse, and the workflow RETURNS a failed outcome with code
// `cancelled` (it does not end as a cancelled execution: result() would throw). A cancel
// that lands during the last step changes nothing: the operation succeeded.
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
  it('before its step: nothing is called, nothing compensated, and the details say who asked and when', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'start' });
    expect(run.outcome).toEqual({
      status: 'failed',
      error: {
        code: 'cancelled',
        message: `the operation was cancelled before charge_payment started (cancel requested ${CANCEL_REASON})`,
        compensations: [],
      },
      steps: [{ name: 'charge_payment', status: 'pending', downstreamKey: `acme/${run.operation.key}/charge` }],
      cancelRequested: true,
    });
    expect(run.calls).toEqual([]);
    expect(run.searchAttributes).toMatchObject({ status: 'failed' });
    expect(run.details).toContain(`**cancel requested** ${CANCEL_REASON} · noticed `);
  });

  it('while its only step runs: the charge finishes and the payment succeeds', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, cancel: 'chargePayment' });
    expect(run.outcome).toMatchObject({ status: 'succeeded', result: { chargeId: 'ch_1' }, cancelRequested: true });
    expect(activityOrder(run.calls)).toEqual(['chargePayment']);
  });
});

describe('checkout, cancelled', () => {
  it('before reserve_items: nothing is called', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'start' });
    expect(run.outcome).toMatchObject({ status: 'failed', error: { code: 'cancelled', compensations: [] } });
    expect(statuses(run.outcome.steps)).toEqual([
      'reserve_items:pending',
      'charge_payment:pending',
      'confirm_reservation:pending',
    ]);
    expect(run.calls).toEqual([]);
    expect(run.memo.step ?? null).toBeNull();
  });

  it('while reserve_items runs: the hold is made, the charge never starts, the hold is released', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'reserveItems' });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'cancelled',
        message: `the operation was cancelled before charge_payment started (cancel requested ${CANCEL_REASON})`,
        compensations: ['release_reservation'],
      },
      cancelRequested: true,
    });
    expect(statuses(run.outcome.steps)).toEqual([
      'reserve_items:compensated',
      'charge_payment:pending',
      'confirm_reservation:pending',
    ]);
    expect(activityOrder(run.calls)).toEqual(['reserveItems', 'releaseReservation']);
    expect(run.calls.find((c) => c.activity === 'releaseReservation')?.downstreamKey).toBe(`acme/${run.operation.key}/reserve`);
    expect(run.searchAttributes).toMatchObject({ status: 'failed', step: 'reserve_items' });
  });

  it('between its charge and its confirm: the charge is reversed, then the hold released', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'chargePayment' });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'cancelled', compensations: ['reverse_charge', 'release_reservation'] },
    });
    expect(statuses(run.outcome.steps)).toEqual([
      'reserve_items:compensated',
      'charge_payment:compensated',
      'confirm_reservation:pending',
    ]);
    expect(activityOrder(run.calls)).toEqual(['reserveItems', 'chargePayment', 'reverseCharge', 'releaseReservation']);
    expect(run.details).toContain('compensations ran: reverse_charge, release_reservation');
  });

  it('while confirm_reservation runs (the last step): it succeeds, nothing is compensated', async () => {
    const run = await runSaga(env, 'checkout', { request: CART, cancel: 'confirmReservation' });
    expect(run.outcome).toMatchObject({
      status: 'succeeded',
      result: { chargeId: 'ch_1', reservationId: 'res_1' },
      cancelRequested: true,
    });
    expect(activityOrder(run.calls)).toEqual(['reserveItems', 'chargePayment', 'confirmReservation']);
  });

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
