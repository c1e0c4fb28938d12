// The shipping service: a stand-in for a team's own service that retrysafe calls, with the
// contract every service a declared step calls must honour:
//
//   POST /shipments               Idempotency-Key → one shipment per key; the answer is stored
//                                 and replayed (Idempotent-Replayed: true) to every retry
//   POST /shipments/{key}/cancel  cancels it once, or leaves a tombstone (`status: "fenced"`)
//                                 when nothing was booked, so a late create is refused (410)
//   GET  /shipments/{key}         the row as stored, for auditors (never faulted)
//
// A refusal is a 4xx problem with a stable `code` (422 destination_not_served), stored and
// replayed like a success. The app's frame, its keyed routes and the fault injection are
// the sandboxes' own (`retrysafe-server/keyed-service`), so this file holds only what is about shipments.
import {
  createSandboxApp,
  Problem,
  refusal,
  registerKeyedActions,
  registerKeyedEffect,
  registerKeyedRead,
  Type,
  type EffectResponse,
  type SandboxApp,
  type SandboxDeps,
} from 'retrysafe-server/keyed-service';
import { ShipmentLedger, type CreateOutcome } from './ledger.js';

const ShipmentRequestSchema = Type.Object(
  {
    recipient: Type.String({ minLength: 1, maxLength: 100 }),
    country: Type.String({ pattern: '^[A-Z]{2}$' }),
    postcode: Type.String({ pattern: '^[A-Za-z0-9 -]{2,12}$' }),
  },
  { additionalProperties: false },
);

const Nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);
const Status = Type.Union([Type.Literal('created'), Type.Literal('cancelled'), Type.Literal('fenced')]);

const ShipmentSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  recipient: Type.String(),
  country: Type.String(),
  postcode: Type.String(),
  trackingNumber: Type.String(),
  status: Type.Literal('created'),
  createdAt: Type.String(),
});

const ShipmentViewSchema = Type.Object({
  key: Type.String(),
  shipmentId: Nullable(Type.String()),
  recipient: Nullable(Type.String()),
  country: Nullable(Type.String()),
  postcode: Nullable(Type.String()),
  trackingNumber: Nullable(Type.String()),
  status: Status,
  createdAt: Type.String(),
  cancelledAt: Nullable(Type.String()),
});

const CancellationSchema = Type.Object({ key: Type.String(), shipmentId: Nullable(Type.String()), status: Status });

export type ShippingDeps = SandboxDeps;

/** The answer a create outcome gets; refusals are answers too, stored and replayed. */
function createAnswer(outcome: CreateOutcome): EffectResponse {
  switch (outcome.kind) {
    case 'created':
      return { status: 201, body: outcome.shipment };
    case 'destination_not_served':
      return refusal(422, 'destination_not_served', `we do not ship to ${outcome.country}`);
    case 'fenced':
      return refusal(410, 'shipment_fenced', 'this shipment was cancelled before it arrived; it will never be booked');
    case 'key_used':
      return refusal(422, 'shipment_key_used', 'a shipment was booked under this key before; use a new key');
  }
}

export function buildApp(deps: ShippingDeps): SandboxApp {
  const { app, executor, faults } = createSandboxApp(deps, [{ prefix: '/shipments/', suffixes: ['/cancel', ''] }]);
  const ledger = new ShipmentLedger(deps.db);

  registerKeyedEffect(
    app,
    { executor, faults },
    {
      path: '/shipments',
      schemas: { body: ShipmentRequestSchema, created: ShipmentSchema },
      effect: (key, body, claimedAt) => createAnswer(ledger.create(key, body, new Date(claimedAt).toISOString())),
    },
  );
  registerKeyedRead(app, {
    prefix: '/shipments/',
    view: ShipmentViewSchema,
    read: (key) => ledger.get(key),
    notFound: (key) => new Problem(404, 'shipment_not_found', `no shipment has been booked or fenced under key ${key}`),
  });
  // A repeat finds the shipment cancelled (or fenced) and answers the same.
  registerKeyedActions(app, faults, {
    prefix: '/shipments/',
    response: CancellationSchema,
    actions: {
      '/cancel': (key) => {
        const { view, changed } = ledger.cancel(key, new Date().toISOString());
        return { changed, answer: { key, shipmentId: view.shipmentId, status: view.status } };
      },
    },
  });
  return app;
}
