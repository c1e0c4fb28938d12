// The one decision both peers' sagas share with retrysafe's: which compensations run after
// a step fails, and the outcome they report. (The peers themselves run only under the
// bench: their engines are installed on demand, not in the test suite.)
import { describe, expect, it } from 'vitest';
import { checkoutKeys, compensationsFor, failed, operationId, type Compensation } from '../../tools/bench/peers/contract.js';
import { DownstreamRefusal, refusalOf } from '../../tools/bench/peers/downstream.js';

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
