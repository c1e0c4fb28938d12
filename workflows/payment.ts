// payment: one step, made safe to retry.
//
//   reverse_charge registered ─▶ charge_payment(<wf>/charge) ──ok──▶ succeeded { chargeId }
//                                      │ business error ───────────▶ failed (nothing to undo)
//                                      └ unknown at the deadline ──▶ reverse_charge (fence)
//                                                                    ─▶ failed payment_unavailable
import type { OperationInput, OperationOutcome, PaymentRequest } from './contracts.js';
import { operationRef } from './identity.js';
import { Saga } from './saga.js';

export async function payment({ tenant, key, request, settings }: OperationInput<PaymentRequest>): Promise<OperationOutcome> {
  const saga = new Saga('payment', operationRef(tenant, key), settings);
  const { account, amount, currency } = request;
  try {
    const { chargeId } = await saga.step('charge_payment', { undo: 'reverse_charge' }, (call, target) =>
      call.chargePayment(target, { account, amount, currency }),
    );
    return saga.succeed({ chargeId });
  } catch (err) {
    return saga.fail(err);
  }
}
