// checkout: hold the goods, take the money, keep the goods. Every boundary is keyed.
//
//   release_reservation registered ─▶ reserve_items(<wf>/reserve)
//   reverse_charge registered      ─▶ charge_payment(<wf>/charge)
//                                   ─▶ confirm_reservation(<wf>/reserve) ─▶ succeeded
//
//   a step fails with a business error ─▶ its own compensation skipped, earlier ones run
//   a step's outcome unknown at its deadline ─▶ fenced by its own compensation (confirm
//   has none), then the earlier ones; compensations run in reverse: reverse_charge, then
//   release_reservation
import type { CheckoutRequest, OperationInput, OperationOutcome } from './contracts.js';
import { operationRef } from './identity.js';
import { Saga } from './saga.js';

export async function checkout({ tenant, key, request, settings }: OperationInput<CheckoutRequest>): Promise<OperationOutcome> {
  const saga = new Saga('checkout', operationRef(tenant, key), settings);
  const { account, amount, currency, items } = request;
  try {
    const { reservationId } = await saga.step('reserve_items', { undo: 'release_reservation' }, (call, target) =>
      call.reserveItems(target, { items, ttlSeconds: settings.holdTtlSeconds }),
    );
    const { chargeId } = await saga.step('charge_payment', { undo: 'reverse_charge' }, (call, target) =>
      call.chargePayment(target, { account, amount, currency }),
    );
    await saga.step('confirm_reservation', {}, (call, target) => call.confirmReservation(target));
    return saga.succeed({ chargeId, reservationId });
  } catch (err) {
    return saga.fail(err);
  }
}
