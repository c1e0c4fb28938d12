// The one decision both peers' sagas share with retrysafe's: which compensations run after
// a step fails, and the outcome they report. (The peers themselves run only under the
// bench: their engines are installed on demand, not in the test suite.)
import { describe, expect, it } from 'vitest';
import {
  checkoutKeys,
  compensationsFor,
  failed,
  operationId,
  StepFailedError,
  type Compensation,
} from '../../tools/bench/peers/contract.js';
import { DownstreamRefusal, refusalOf, type SandboxClients } from '../../tools/bench/peers/downstream.js';
import { checkoutSaga, type SagaEngine } from '../../tools/bench/peers/saga.js';

const registered = (
  ...names: Array<['release_reservation' | 'reverse_charge', 'reserve_items' | 'charge_payment']>
): Compensation[] => names.map(([name, undoes]) => ({ name, undoes, run: async () => undefined }));

describe('peer checkout saga', () => {
  it("derives retrysafe's keys from the tenant-scoped operation ID", () => {
    expect(checkoutKeys(operationId('order-42'))).toEqual({
      operationId: 'default/order-42',
      reserve: 'default/order-42/reserve',
      charge: 'default/order-42/charge',
    });
  });

  it('when the charge is declined, releases the reservation only', () => {
    const all = registered(['release_reservation', 'reserve_items'], ['reverse_charge', 'charge_payment']);
    const failure = { step: 'charge_payment' as const, businessCode: 'insufficient_funds', message: 'declined' };
    expect(compensationsFor(all, failure).map((c) => c.name)).toEqual(['release_reservation']);
    expect(failed(failure, ['release_reservation']).error).toEqual({
      code: 'insufficient_funds',
      message: 'declined',
      compensations: ['release_reservation'],
    });
  });

  it('when the confirm is refused, reverses the charge and then releases the reservation', () => {
    const all = registered(['release_reservation', 'reserve_items'], ['reverse_charge', 'charge_payment']);
    const failure = { step: 'confirm_reservation' as const, businessCode: 'reservation_expired', message: 'expired' };
    expect(compensationsFor(all, failure).map((c) => c.name)).toEqual(['reverse_charge', 'release_reservation']);
  });

  it('when a charge stays unknown past its retries, fences it with its own reversal and reports payment_unavailable', () => {
    const all = registered(['release_reservation', 'reserve_items'], ['reverse_charge', 'charge_payment']);
    const failure = { step: 'charge_payment' as const, message: 'bank answered 503' };
    expect(compensationsFor(all, failure).map((c) => c.name)).toEqual(['reverse_charge', 'release_reservation']);
    expect(failed(failure, ['reverse_charge', 'release_reservation']).error?.code).toBe('payment_unavailable');
  });

  it('recognises a refusal revived from storage as a plain object, and nothing else', () => {
    const revived = JSON.parse(
      JSON.stringify({ ...new DownstreamRefusal('out_of_stock', true, 'gone'), name: 'DownstreamRefusal', message: 'gone' }),
    );
    expect(refusalOf(revived)).toEqual({ code: 'out_of_stock', business: true, message: 'gone' });
    expect(refusalOf(new Error('bank answered 503'))).toBeUndefined();
  });
});

describe("the peers' one checkout saga", () => {
  const keys = checkoutKeys(operationId('order-7'));
  const request = { account: 'acc_alice', amount: 4200, currency: 'EUR', items: [{ sku: 'sku_mug', quantity: 2 }] };

  /** An engine that runs each part at once, as on a first run, and gives a step up when it is refused. */
  function run(declineCharge: boolean) {
    const journal: string[] = [];
    const engine: SagaEngine = {
      async step(name, action) {
        journal.push(name);
        try {
          return await action();
        } catch (err) {
          const refusal = refusalOf(err);
          if (!refusal) throw err;
          throw new StepFailedError({ step: name, businessCode: refusal.code, message: refusal.message });
        }
      },
      async undo(name, action) {
        journal.push(name);
        return action();
      },
    };
    const calls: string[] = [];
    const downstream = {
      hold: async (key: string) => (calls.push(`hold ${key}`), { reservationId: 'res_1' }),
      confirm: async (key: string) => void calls.push(`confirm ${key}`),
      release: async (key: string) => void calls.push(`release ${key}`),
      charge: async (key: string) => {
        calls.push(`charge ${key}`);
        if (declineCharge) throw new DownstreamRefusal('insufficient_funds', true, 'declined');
        return { chargeId: 'ch_1' };
      },
      reverse: async (key: string) => void calls.push(`reverse ${key}`),
    } as unknown as SandboxClients;
    return { outcome: checkoutSaga(engine, downstream, keys, request), journal, calls };
  }

  it('holds, charges and confirms under the derived keys, and answers both ids', async () => {
    const { outcome, journal, calls } = run(false);
    expect(await outcome).toEqual({
      type: 'checkout',
      status: 'succeeded',
      result: { chargeId: 'ch_1', reservationId: 'res_1' },
    });
    expect(journal).toEqual(['reserve_items', 'charge_payment', 'confirm_reservation']);
    expect(calls).toEqual(['hold default/order-7/reserve', 'charge default/order-7/charge', 'confirm default/order-7/reserve']);
  });

  it('when the charge is declined, releases the reservation and reports the refusal', async () => {
    const { outcome, journal, calls } = run(true);
    expect((await outcome).error).toEqual({
      code: 'insufficient_funds',
      message: 'declined',
      compensations: ['release_reservation'],
    });
    expect(journal).toEqual(['reserve_items', 'charge_payment', 'release_reservation']);
    expect(calls.at(-1)).toBe('release default/order-7/reserve');
  });
});
