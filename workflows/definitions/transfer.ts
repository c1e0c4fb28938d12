// transfer: money leaves one account and arrives at another, exactly once.
//
//   reverse_debit registered  ─▶ debit_source(<wf>/debit)        bank: POST /charges on `from`
//   reverse_credit registered ─▶ credit_destination(<wf>/credit)  bank: POST /credits on `to`
//                              ─▶ succeeded { debitId, creditId }
//
//   the credit refused (destination_not_found, currency_mismatch) ─▶ reverse_debit
//   a step unknown at its deadline ─▶ fenced by its own compensation, then the earlier one
//                                   ─▶ failed transfer_unavailable
//
// Both steps are declared calls: no activity code, the generic service activity makes them
// with the derived key as Idempotency-Key and classifies the bank's answers.
import { Type } from 'typebox';
import { defineOperation, keyedHttpStep } from '../definition.js';
import { Account, Amount, bankCharge, Currency, Description, formatAmount, RequestBody } from '../fields.js';

export const TransferRequest = RequestBody('A transfer: debit one account, credit another.', {
  from: Account('Account the money leaves'),
  to: Account('Account the money arrives at (not `from`)'),
  amount: Amount,
  currency: Currency,
  description: Type.Optional(Description),
});

export const transfer = defineOperation({
  type: 'transfer',
  plural: 'transfers',
  description: 'Debit `from`, credit `to`; a refused credit reverses the debit.',
  request: TransferRequest,
  check: ({ from, to }) => (from === to ? [{ field: 'to', message: 'must not be the same account as from' }] : []),
  steps: [
    bankCharge({
      name: 'debit_source',
      keySuffix: 'debit',
      account: 'from',
      undo: 'reverse_debit',
      resultField: 'debitId',
    }),
    keyedHttpStep({
      name: 'credit_destination',
      keySuffix: 'credit',
      service: 'bank',
      collection: '/credits',
      body: { account: 'to', amount: 'amount', currency: 'currency' },
      businessErrors: { account_not_found: 'destination_not_found', currency_mismatch: 'currency_mismatch' },
      undo: { name: 'reverse_credit', action: 'reverse' },
      result: { creditId: 'id' },
      present: ['credited'],
    }),
  ],
  unavailableCode: 'transfer_unavailable',
  summary: ({ amount, currency }) => formatAmount(amount, currency),
  details: ({ from, to, description }) => [`\`${from}\` → \`${to}\``, ...(description ? [description.slice(0, 200)] : [])],
});
