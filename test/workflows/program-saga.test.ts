// The generic workflow runs the program its input carries, never the worker's current
// definition; it treats that program as input, not trust; and operations started before
// programs were recorded still run their type's definition as their histories recorded it.
// On Temporal's time-skipping test server, with scripted activities (time-skipping.ts).
import { describe, expect, it } from 'vitest';
import { programFor } from '../../common/programs.js';
import { checkout } from '../../workflows/definitions/checkout.js';
import { payment } from '../../workflows/definitions/payment.js';
import { activityOrder, CART, CHARGE, expectFailed, runSaga, statuses, useTimeSkipping } from './time-skipping.js';

const env = useTimeSkipping();

describe('an operation runs the program it carries', () => {
  it('a step the definition no longer has still runs, under its own name; a step it gained does not', async () => {
    const recorded = programFor(payment);
    const older = {
      ...recorded,
      version: 'older',
      steps: [
        {
          ...recorded.steps[0]!,
          name: 'take_deposit',
          keySuffix: 'deposit',
          compensation: { ...recorded.steps[0]!.compensation!, name: 'refund_deposit' },
        },
        ...recorded.steps,
      ],
    };
    const run = await runSaga(env, 'payment', { request: CHARGE, program: older });
    expect(run.outcome).toMatchObject({ status: 'succeeded', version: 'older' });
    expect(activityOrder(run.calls)).toEqual(['take_deposit', 'charge_payment']);
    expect(run.calls.map((c) => c.downstreamKey)).toEqual([
      `acme/${run.operation.key}/deposit`,
      `acme/${run.operation.key}/charge`,
    ]);
    expect(statuses(run)).toBe('take_deposit:completed charge_payment:completed');
  });

  it("reads each body field from the request, the program's settings or a constant", async () => {
    const recorded = programFor(checkout, { holdTtlSeconds: 77 });
    const run = await runSaga(env, 'checkout', { request: CART, program: recorded });
    expect(run.calls[0]).toMatchObject({ activity: 'reserve_items', request: { items: CART.items, ttlSeconds: 77 } });
    expect(run.calls[1]).toMatchObject({ activity: 'charge_payment', request: CHARGE });
  });
});

describe('a recorded program is input, not trust', () => {
  it.each([
    [
      'a path that leaves its service',
      (p: ReturnType<typeof programFor>) => ({
        ...p,
        steps: [{ ...p.steps[0]!, call: { ...p.steps[0]!.call, path: '@evil.example/charges' } }],
      }),
    ],
    ['no steps', (p: ReturnType<typeof programFor>) => ({ ...p, steps: [] })],
    [
      'a field map that is code',
      (p: ReturnType<typeof programFor>) => ({
        ...p,
        steps: [{ ...p.steps[0]!, call: { ...p.steps[0]!.call, body: 'account' } }],
      }),
    ],
    ['a step named twice', (p: ReturnType<typeof programFor>) => ({ ...p, steps: [p.steps[0]!, p.steps[0]!] })],
  ])('one with %s runs no step, fails definition_refused and needs attention', async (_what, spoil) => {
    const run = await runSaga(env, 'payment', { request: CHARGE, program: spoil(programFor(payment)) });
    expectFailed(run, 'definition_refused', [], /^its definition cannot run: /);
    expect(run.calls).toEqual([]);
    expect(run.outcome.needsAttention).toBe(true);
    expect(run.outcome).toMatchObject({ attentionReason: expect.stringMatching(/^its definition cannot run: /) });
    expect(run.searchAttributes).toMatchObject({ status: 'failed', needsAttention: true });
  });

  it('refused by the worker at its first step (a service it lacks): nothing ran, nothing to undo, an operator flagged', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      script: { reserve_items: { lacks: 'no base URL for service reservations' } },
    });
    expectFailed(run, 'definition_refused', [], /it has no base URL for service reservations/);
    expect(activityOrder(run.calls)).toEqual(['reserve_items']);
    expect(statuses(run)).toBe('reserve_items:failed charge_payment:pending confirm_reservation:pending');
    expect(run.memo).toMatchObject({ needsAttention: true, attentionReason: expect.stringContaining('service reservations') });
  });

  it('refused at a later step (another worker took it): that step did not run, the earlier ones are undone', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      script: { charge_payment: { lacks: 'no base URL for service bank' } },
    });
    expectFailed(run, 'definition_refused', ['release_reservation']);
    expect(activityOrder(run.calls)).toEqual(['reserve_items', 'charge_payment', 'release_reservation']);
    expect(run.outcome.needsAttention).toBe(true);
  });
});

describe('an operation started before operations carried their program', () => {
  it('a payment runs its hand-written activity, as its history recorded it', async () => {
    const run = await runSaga(env, 'payment', { request: CHARGE, legacy: true });
    expect(run.outcome).toMatchObject({ status: 'succeeded', result: { chargeId: 'ch_1' } });
    expect(run.outcome).not.toHaveProperty('version');
    expect(activityOrder(run.calls)).toEqual(['chargePayment']);
    expect(run.calls[0]).toMatchObject({ request: CHARGE });
  });

  it('a checkout compensates with its hand-written activities, its hold time from its settings', async () => {
    const run = await runSaga(env, 'checkout', {
      request: CART,
      legacy: true,
      settings: { holdTtlSeconds: 42 },
      script: { confirmReservation: { refuse: 'reservation_expired' } },
    });
    expectFailed(run, 'reservation_expired', ['reverse_charge', 'release_reservation']);
    expect(activityOrder(run.calls)).toEqual([
      'reserveItems',
      'chargePayment',
      'confirmReservation',
      'reverseCharge',
      'releaseReservation',
    ]);
    expect(run.calls[0]).toMatchObject({ request: { items: CART.items, ttlSeconds: 42 } });
  });
});
