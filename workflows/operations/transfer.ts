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
import { defineOperation } from '../definition.js';
import { Account, Amount, Currency, Description, formatAmount } from '../fields.js';

export const TransferRequest = Type.Object(
  {
    from: Account('Account the money leaves'),
    to: Account('Account the money arrives at (not `from`)'),
    amount: Amount,
    currency: Currency,
    description: Type.Optional(Description),
  },
  { additionalProperties: false, description: 'A transfer: debit one account, credit another.' },
);

export const transfer = defineOperation({
  type: 'transfer',
  plural: 'transfers',
  description: 'Debit `from`, credit `to`; a refused credit reverses the debit.',
  request: TransferRequest,
  check: ({ from, to }) => (from === to ? [{ field: 'to', message: 'must not be the same account as from' }] : []),
  steps: [
    {
      name: 'debit_source',
      keySuffix: 'debit',
      service: 'bank',
      call: {
        kind: 'http',
        method: 'POST',
        path: '/charges',
        body: ({ from, amount, currency }) => ({ account: from, amount, currency }),
      },
      businessErrors: {
        insufficient_funds: 'insufficient_funds',
        account_not_found: 'account_not_found',
        currency_mismatch: 'currency_mismatch',
      },
      compensation: { name: 'reverse_debit', call: { kind: 'http', method: 'POST', path: '/charges/{key}/reverse' } },
      result: { debitId: 'id' },
      effect: { path: '/charges/{key}', present: ['captured'] },
    },
    {
      name: 'credit_destination',
      keySuffix: 'credit',
      service: 'bank',
      call: {
        kind: 'http',
        method: 'POST',
        path: '/credits',
        body: ({ to, amount, currency }) => ({ account: to, amount, currency }),
      },
      businessErrors: { account_not_found: 'destination_not_found', currency_mismatch: 'currency_mismatch' },
      compensation: { name: 'reverse_credit', call: { kind: 'http', method: 'POST', path: '/credits/{key}/reverse' } },
      result: { creditId: 'id' },
      effect: { path: '/credits/{key}', present: ['credited'] },
    },
  ],
  unavailableCode: 'transfer_unavailable',
  summary: ({ amount, currency }) => formatAmount(amount, currency),
  details: ({ from, to, description }) => [`\`${from}\` → \`${to}\``, ...(description ? [description.slice(0, 200)] : [])],
});
