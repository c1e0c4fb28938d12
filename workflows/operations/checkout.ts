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
//
// Hand-written activities (activities/reservations.ts, activities/bank.ts): their names and
// inputs are in every checkout history recorded since the first release.
import { Type } from 'typebox';
import { defineOperation } from '../definition.js';
import { Account, Amount, Currency, Description, formatAmount, IDENTIFIER_PATTERN, RequestBody } from '../fields.js';
import { chargePayment } from './payment.js';

export const CheckoutItem = Type.Object(
  {
    sku: Type.String({ minLength: 1, maxLength: 128, pattern: IDENTIFIER_PATTERN, examples: ['sku_book'] }),
    quantity: Type.Integer({ minimum: 1, maximum: 1000 }),
  },
  { additionalProperties: false },
);

export const CheckoutRequest = RequestBody('A checkout: reserve the items, charge, confirm the reservation.', {
  account: Account('Account to charge'),
  amount: Amount,
  currency: Currency,
  description: Type.Optional(Description),
  items: Type.Array(CheckoutItem, { minItems: 1, maxItems: 100 }),
});

export const checkout = defineOperation({
  type: 'checkout',
  plural: 'checkouts',
  description: 'Reserve the items, charge, confirm the reservation; compensated in reverse on failure.',
  request: CheckoutRequest,
  steps: [
    {
      name: 'reserve_items',
      keySuffix: 'reserve',
      service: 'reservations',
      call: {
        kind: 'activity',
        activity: 'reserveItems',
        input: ({ items }, { holdTtlSeconds }) => ({ items, ttlSeconds: holdTtlSeconds }),
      },
      businessErrors: { out_of_stock: 'out_of_stock', unknown_sku: 'unknown_sku' },
      compensation: { name: 'release_reservation', call: { kind: 'activity', activity: 'releaseReservation' } },
      result: { reservationId: 'reservationId' },
      unavailableCode: 'inventory_unavailable',
      effect: { path: '/reservations/{key}', present: ['held', 'confirmed'] },
    },
    chargePayment,
    {
      name: 'confirm_reservation',
      // It acts on the hold the reserve step made.
      keySuffix: 'reserve',
      service: 'reservations',
      call: { kind: 'activity', activity: 'confirmReservation' },
      businessErrors: { reservation_expired: 'reservation_expired' },
      unavailableCode: 'inventory_unavailable',
      effect: { path: '/reservations/{key}', present: ['confirmed'] },
    },
  ],
  unavailableCode: 'inventory_unavailable',
  summary: ({ amount, currency }) => formatAmount(amount, currency),
  details: ({ account, items, description }) => [
    `account \`${account}\``,
    ...items.map((item) => `${item.quantity} × \`${item.sku}\``),
    ...(description ? [description.slice(0, 200)] : []),
  ],
});
