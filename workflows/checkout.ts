// checkout: hold the goods, take the money, keep the goods. Every boundary is keyed.
//
//   release_reservation registered ─▶ reserve_items(<wf>/reserve)
//   reverse_charge registered      ─▶ charge_payment(<wf>/charge)
//                                   ─▶ confirm_reservation(<wf>/reserve) ─▶ succeeded
//
//   a step fails with a business error ─▶ its own compensation skipped, earlier ones run
//   a step's outcome unknown at its deadline ─▶ fenced by its own compensation, then
//   the earlier ones; compensations run in reverse: reverse_charge, release_reservation
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { DEFAULT_HOLD_TTL_SECONDS, type CheckoutRequest, type OperationInput, type OperationOutcome } from './contracts.js';
import { Progress } from './progress.js';
import { Saga } from './saga.js';
import { compensationCall, failStep, stepCall, summary } from './steps.js';

export async function checkout(input: OperationInput<CheckoutRequest>): Promise<OperationOutcome> {
  const { request, settings } = input;
  const call = proxyActivities<Activities>(stepCall(settings));
  const undo = proxyActivities<Activities>(compensationCall);
  const progress = new Progress('checkout', ['reserve_items', 'charge_payment', 'confirm_reservation']);
  const saga = new Saga({ attentionAfterMs: settings.attentionAfterMs, onAttention: () => progress.needsAttention() });
  const reserveKey = progress.keyOf('reserve_items');
  const chargeKey = progress.keyOf('charge_payment');

  saga.register('release_reservation', () =>
    undo.releaseReservation.executeWithOptions(summary(`release_reservation · reservations key ${reserveKey}`), [{ key: reserveKey }]),
  );
  progress.start('reserve_items');
  let reservationId: string;
  try {
    ({ reservationId } = await call.reserveItems.executeWithOptions(summary(`reserve_items · reservations key ${reserveKey}`), [
      { key: reserveKey, items: request.items, ttlSeconds: settings.holdTtlSeconds ?? DEFAULT_HOLD_TTL_SECONDS },
    ]));
    progress.mark('reserve_items', 'completed', `hold ${reservationId}`);
  } catch (err) {
    return failStep(err, 'reserve_items', 'release_reservation', saga, progress);
  }

  saga.register('reverse_charge', () =>
    undo.reverseCharge.executeWithOptions(summary(`reverse_charge · bank key ${chargeKey}`), [{ key: chargeKey }]),
  );
  progress.start('charge_payment');
  let chargeId: string;
  try {
    ({ chargeId } = await call.chargePayment.executeWithOptions(summary(`charge_payment · bank key ${chargeKey}`), [
      { key: chargeKey, account: request.account, amount: request.amount, currency: request.currency },
    ]));
    progress.mark('charge_payment', 'completed', `bank charge ${chargeId}`);
  } catch (err) {
    return failStep(err, 'charge_payment', 'reverse_charge', saga, progress);
  }

  progress.start('confirm_reservation');
  try {
    await call.confirmReservation.executeWithOptions(summary(`confirm_reservation · reservations key ${reserveKey}`), [
      { key: reserveKey },
    ]);
    progress.mark('confirm_reservation', 'completed', `reservation ${reservationId} confirmed`);
  } catch (err) {
    return failStep(err, 'confirm_reservation', null, saga, progress);
  }
  return progress.succeed({ chargeId, reservationId });
}
