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
// Every step is a declared keyed call; the hold's lifetime is the definition's own setting,
// fixed for each checkout at its start.
import { Type } from 'typebox';
import { defineOperation, keyedHttpStep } from '../definition.js';
import { Account, Amount, Currency, Description, formatAmount, IDENTIFIER_PATTERN, RequestBody } from '../fields.js';
import { paymentCharge } from './payment.js';

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
  settings: {
    holdTtlSeconds: {
      default: 900,
      minimum: 1,
      maximum: 86_400,
      description: 'How long the reservation service keeps the hold before it expires and gives the goods back',
    },
  },
  steps: [
    keyedHttpStep({
      name: 'reserve_items',
      keySuffix: 'reserve',
      service: 'reservations',
      collection: '/reservations',
      body: { items: 'items', ttlSeconds: { setting: 'holdTtlSeconds' } },
      businessErrors: { out_of_stock: 'out_of_stock', unknown_sku: 'unknown_sku' },
      undo: { name: 'release_reservation', action: 'release' },
      result: { reservationId: 'id' },
      present: ['held', 'confirmed'],
      unavailableCode: 'inventory_unavailable',
    }),
    paymentCharge,
    {
      name: 'confirm_reservation',
      // It acts on the hold the reserve step made.
      keySuffix: 'reserve',
      service: 'reservations',
      call: { kind: 'http', method: 'POST', path: '/reservations/{key}/confirm' },
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
