// fulfilment: take the money for an order, then book its shipment. An operation defined
// outside retrysafe's source: RETRYSAFE_OPERATIONS=examples/shipping (or `npm start --
// --operations examples/shipping`) loads this file into the API and the worker.
//
//   refund_customer registered ─▶ charge_customer(<wf>/charge)    bank: POST /charges
//   cancel_shipment registered ─▶ create_shipment(<wf>/shipment)  shipping: POST /shipments
//                              ─▶ succeeded { chargeId, shipmentId, trackingNumber }
//
//   the shipment refused (destination_not_served) ─▶ refund_customer
//   a step unknown at its deadline ─▶ fenced by its own compensation, then the earlier one
//                                   ─▶ failed fulfilment_unavailable
//
// Both steps are declared keyed HTTP calls: no activity code. The worker sends the derived
// key as Idempotency-Key, retries transient failures with it until the step's deadline, and
// reads a 4xx problem whose code is listed in `businessErrors` as a final refusal. The
// service names ("bank", "shipping") are resolved to URLs by the worker's configuration.
//
// This module is bundled into the workflow code, so it must stay plain data and pure
// functions of the request: no I/O, no Node built-ins, no clock, no randomness.
import {
  Account,
  Amount,
  bankCharge,
  Currency,
  defineOperation,
  formatAmount,
  FreeText,
  keyedHttpStep,
  RequestBody,
  Type,
} from 'retrysafe-server/define';

export const FulfilmentRequest = RequestBody('An order to fulfil: charge the account, ship the parcel.', {
  account: Account('Account to charge for the order'),
  amount: Amount,
  currency: Currency,
  recipient: FreeText({ minLength: 1, maxLength: 100, description: 'Who the parcel is addressed to' }),
  country: Type.String({
    pattern: '^[A-Z]{2}$',
    description: 'ISO 3166-1 alpha-2 code of the destination, upper case',
    examples: ['FR'],
  }),
  postcode: Type.String({ pattern: '^[A-Za-z0-9 -]{2,12}$', description: 'Postcode of the destination' }),
});

export const fulfilment = defineOperation({
  type: 'fulfilment',
  plural: 'fulfilments',
  description: 'Charge the account, then book the shipment; a refused shipment refunds the charge.',
  request: FulfilmentRequest,
  steps: [
    // The bank's charge, declared: its refusals (insufficient_funds, …) are final answers,
    // and refund_customer is registered before it is sent, since a charge whose answer was
    // lost may still exist.
    bankCharge({
      name: 'charge_customer',
      keySuffix: 'charge',
      account: 'account',
      undo: 'refund_customer',
      resultField: 'chargeId',
    }),
    // The shipping service keeps the same keyed contract: POST /shipments with the key,
    // POST /shipments/{key}/cancel, GET /shipments/{key}.
    keyedHttpStep({
      name: 'create_shipment',
      keySuffix: 'shipment',
      service: 'shipping',
      collection: '/shipments',
      body: { recipient: 'recipient', country: 'country', postcode: 'postcode' },
      businessErrors: { destination_not_served: 'destination_not_served' },
      undo: { name: 'cancel_shipment', action: 'cancel' },
      result: { shipmentId: 'id', trackingNumber: 'trackingNumber' },
      present: ['created'],
    }),
  ],
  unavailableCode: 'fulfilment_unavailable',
  summary: ({ amount, currency, country }) => `${formatAmount(amount, currency)} to ${country}`,
  details: ({ account, recipient, country, postcode }) => [`account \`${account}\``, `${recipient}, ${postcode} ${country}`],
});

/** What RETRYSAFE_OPERATIONS loads from this folder. */
export const operations = [fulfilment];
