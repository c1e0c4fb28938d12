// Every branch of the payment saga, on the time-skipping test server with scripted
// activities: the step's retries and its deadline pass in server time.
import { programFor } from '../../common/programs.js';
import { payment } from '../../workflows/definitions/payment.js';
import { describe, expect, it } from 'vitest';
import { activityOrder, CHARGE, runSaga, useTimeSkipping } from './time-skipping.js';

const env = useTimeSkipping();

describe('payment saga', () => {
  it('charges once under <tenant>/<key>/charge, hands the activity its operation, and succeeds', async () => {
    const run = await runSaga(env, 'payment', { request: { ...CHARGE, description: 'not sent to the bank' } });
    const { operation } = run;
    expect(run.outcome).toEqual({
      status: 'succeeded',
      result: { chargeId: 'ch_1' },
      type: 'payment',
      key: operation.key,
      createdAt: run.startTime.toISOString(),
      step: 'charge_payment',
      steps: [{ name: 'charge_payment', status: 'completed', downstreamKey: `acme/${operation.key}/charge` }],
      needsAttention: false,
      version: programFor(payment).version,
    });
    expect(run.calls).toEqual([
      { activity: 'charge_payment', operation, downstreamKey: `acme/${operation.key}/charge`, request: CHARGE, attempt: 1 },
    ]);
    expect(run.summaries).toEqual([`charge_payment · bank key \`acme/${operation.key}/charge\``]);
    // Answered at once: the one local attempt, nothing on the task queue.
    expect(run.scheduled).toEqual([]);
    expect(run.searchAttributes).toMatchObject({ status: 'succeeded', step: 'charge_payment' });
    expect(run.memo).toMatchObject({ step: 'charge_payment', steps: run.outcome.steps });
  });

  it('when the bank declines the charge, fails with its code at once and runs no compensation', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, script: { charge_payment: { refuse: 'insufficient_funds' } } });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', message: 'charge_payment: refused (insufficient_funds)', compensations: [] },
      steps: [{ name: 'charge_payment', status: 'failed' }],
    });
    expect(run.calls.map((c) => [c.activity, c.attempt])).toEqual([['charge_payment', 1]]);
    expect(run.searchAttributes).toMatchObject({ status: 'failed', step: 'charge_payment' });
  });

  it('when the charge is still unknown at its deadline, fences it with reverse_charge on the same key and fails payment_unavailable', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, script: { charge_payment: 'unavailable' } });
    const chargeKey = `acme/${run.operation.key}/charge`;
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
      steps: [{ name: 'charge_payment', status: 'fenced', downstreamKey: chargeKey }],
    });
    // Retried with the same key until the deadline, then reversed under that key.
    expect(run.calls.filter((c) => c.activity === 'charge_payment').length).toBeGreaterThan(3);
    expect(activityOrder(run.calls)).toEqual(['charge_payment', 'reverse_charge']);
    expect(new Set(run.calls.map((c) => c.downstreamKey))).toEqual(new Set([chargeKey]));
    // The first attempt (local, its marker), its retries (one regular activity), the fence.
    expect(run.summaries).toEqual([
      `charge_payment · bank key \`${chargeKey}\``,
      `charge_payment · bank key \`${chargeKey}\``,
      `reverse_charge · bank key \`${chargeKey}\``,
    ]);
    expect(run.scheduled).toEqual(['charge_payment', 'reverse_charge']);
  });

  it('when the bank refuses the key as already fenced, treats the charge as unknown and reverses it', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, script: { charge_payment: { refuse: 'charge_fenced' } } });
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
      steps: [{ name: 'charge_payment', status: 'fenced' }],
    });
    expect(run.calls.map((c) => [c.activity, c.attempt])).toEqual([
      ['charge_payment', 1],
      ['reverse_charge', 1],
    ]);
  });
});
