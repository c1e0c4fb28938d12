// payment: one charge, made safe to retry.
//
//   reverse_charge registered ─▶ charge_payment(<wf>/charge) ──ok──▶ succeeded { chargeId }
//                                      │ business error ───────────▶ failed (nothing to undo)
//                                      └ unknown at the deadline ──▶ reverse_charge (fence)
//                                                                    ─▶ failed payment_unavailable
//
// The charge is a hand-written activity (activities/bank.ts) rather than a declared call: its
// activity name and input are in every payment history recorded since the first release.
import { Type } from 'typebox';
import { defineOperation, type StepDefinition } from '../definition.js';
import { Account, Amount, CHARGE_EFFECT, CHARGE_REFUSALS, Currency, Description, formatAmount, RequestBody } from '../fields.js';

export const PaymentRequest = RequestBody('A payment: one charge.', {
  account: Account('Account to charge'),
  amount: Amount,
  currency: Currency,
  description: Type.Optional(Description),
});

/** The charge as payment and checkout both make it. */
export const chargePayment: StepDefinition<{ account: string; amount: number; currency: string }> = {
  name: 'charge_payment',
  keySuffix: 'charge',
  service: 'bank',
  call: {
    kind: 'activity',
    activity: 'chargePayment',
    input: ({ account, amount, currency }) => ({ account, amount, currency }),
  },
  businessErrors: CHARGE_REFUSALS,
  compensation: { name: 'reverse_charge', call: { kind: 'activity', activity: 'reverseCharge' } },
  result: { chargeId: 'chargeId' },
  unavailableCode: 'payment_unavailable',
  effect: CHARGE_EFFECT,
};

export const payment = defineOperation({
  type: 'payment',
  plural: 'payments',
  description: 'One charge. A retry with the same Idempotency-Key and body answers with the same operation.',
  request: PaymentRequest,
  steps: [chargePayment],
  unavailableCode: 'payment_unavailable',
  summary: ({ amount, currency }) => formatAmount(amount, currency),
  details: ({ account, description }) => [`account \`${account}\``, ...(description ? [description.slice(0, 200)] : [])],
  cliAliases: ['pay'],
});
