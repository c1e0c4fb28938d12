// payment: one step, made safe to retry.
//
//   reverse_charge registered ─▶ charge_payment(<wf>/charge) ──ok──▶ succeeded { chargeId }
//                                      │ business error ───────────▶ failed (nothing to undo)
//                                      └ unknown at the deadline ──▶ reverse_charge (fence)
//                                                                    ─▶ failed payment_unavailable
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { OperationInput, OperationOutcome, PaymentRequest } from './contracts.js';
import { Progress } from './progress.js';
import { Saga } from './saga.js';
import { compensationCall, failStep, stepCall, summary } from './steps.js';

export async function payment(input: OperationInput<PaymentRequest>): Promise<OperationOutcome> {
  const { request, settings } = input;
  const bank = proxyActivities<Activities>(stepCall(settings));
  const undo = proxyActivities<Activities>(compensationCall);
  const progress = new Progress('payment', ['charge_payment']);
  const saga = new Saga({ attentionAfterMs: settings.attentionAfterMs, onAttention: () => progress.needsAttention() });

  const chargeKey = progress.keyOf('charge_payment');
  saga.register('reverse_charge', () =>
    undo.reverseCharge.executeWithOptions(summary(`reverse_charge · bank key ${chargeKey}`), [{ key: chargeKey }]),
  );
  progress.start('charge_payment');
  try {
    const { chargeId } = await bank.chargePayment.executeWithOptions(summary(`charge_payment · bank key ${chargeKey}`), [
      { key: chargeKey, account: request.account, amount: request.amount, currency: request.currency },
    ]);
    progress.mark('charge_payment', 'completed', `bank charge ${chargeId}`);
    return progress.succeed({ chargeId });
  } catch (err) {
    return failStep(err, 'charge_payment', 'reverse_charge', saga, progress);
  }
}
