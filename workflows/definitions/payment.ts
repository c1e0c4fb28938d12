// payment: one charge, made safe to retry.
//
//   reverse_charge registered ─▶ charge_payment(<wf>/charge) ──ok──▶ succeeded { chargeId }
//                                      │ business error ───────────▶ failed (nothing to undo)
//                                      └ unknown at the deadline ──▶ reverse_charge (fence)
//                                                                    ─▶ failed payment_unavailable
//
// The charge is the bank's declared charge (fields.ts), the same step checkout makes.
import { Type } from 'typebox';
import { defineOperation } from '../definition.js';
import { Account, Amount, bankCharge, Currency, Description, formatAmount, RequestBody } from '../fields.js';

export const PaymentRequest = RequestBody('A payment: one charge.', {
  account: Account('Account to charge'),
  amount: Amount,
  currency: Currency,
  description: Type.Optional(Description),
});

/** The charge as payment and checkout both make it. */
export const paymentCharge = bankCharge({
  name: 'charge_payment',
  keySuffix: 'charge',
  account: 'account',
  undo: 'reverse_charge',
  resultField: 'chargeId',
  unavailableCode: 'payment_unavailable',
});

export const payment = defineOperation({
  type: 'payment',
  plural: 'payments',
  description: 'One charge. A retry with the same Idempotency-Key and body answers with the same operation.',
  request: PaymentRequest,
  steps: [paymentCharge],
  unavailableCode: 'payment_unavailable',
  summary: ({ amount, currency }) => formatAmount(amount, currency),
  details: ({ account, description }) => [`account \`${account}\``, ...(description ? [description.slice(0, 200)] : [])],
  cliAliases: ['pay'],
});
