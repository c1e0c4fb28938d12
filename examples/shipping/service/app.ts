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
// replayed like a success. The idempotent executor, the problem details and the fault
// injection are the sandboxes' own (downstream/shared), so this file holds only what is
// about shipments.
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type Database from 'better-sqlite3';
import { Type } from 'typebox';
import { Problem } from '../../../common/http/problem.js';
import type { Logger } from '../../../common/logger.js';
import { FaultInjector, killConnection, registerFaultRoutes } from '../../../downstream/shared/faults.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from '../../../downstream/shared/http.js';
import { idempotencyKeyOf, keyFromPath, requireIdempotencyKey } from '../../../downstream/shared/idempotency-key.js';
import { IdempotentExecutor, sendExecution, type EffectResponse } from '../../../downstream/shared/idempotency.js';
import { bindRequestContext } from '../../../downstream/shared/log-context.js';
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

export interface ShippingDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS=1). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
}

const refusal = (status: number, code: string, detail: string): EffectResponse => ({
  status,
  body: new Problem(status, code, detail).body(),
});

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
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installHttpEdge(app);
  bindRequestContext(app, [{ prefix: '/shipments/', suffixes: ['/cancel', ''] }]);

  const ledger = new ShipmentLedger(deps.db);
  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs });
  const faults = new FaultInjector(deps.faults);
  let stopPurging = () => {};
  app.addHook('onReady', async () => {
    stopPurging = executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed'));
  });
  app.addHook('onClose', async () => stopPurging());
  registerFaultRoutes(app, faults);

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.post(
    '/shipments',
    {
      onRequest: faults.downHook,
      preValidation: requireIdempotencyKey,
      schema: { body: ShipmentRequestSchema, response: { 201: ShipmentSchema } },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      const execution = await executor.execute({
        key,
        endpoint: 'POST /shipments',
        body: request.body,
        effect: (claimedAt) => createAnswer(ledger.create(key, request.body, new Date(claimedAt).toISOString())),
        beforeCommit: () => faults.beforeCommit(),
        afterCommit: () => faults.afterCommit(request.log, { key }),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys hold `/` (`default/order-7/shipment`): read from the raw path, encoded or not.
  app.get('/shipments/*', { schema: { response: { 200: ShipmentViewSchema } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', '/shipments/');
    const found = key === undefined ? undefined : ledger.get(key);
    if (!found) throw new Problem(404, 'shipment_not_found', `no shipment has been booked or fenced under key ${key ?? ''}`);
    return found;
  });

  // Not keyed by a header: the path names the shipment, and a repeat finds it cancelled.
  app.post(
    '/shipments/*',
    { onRequest: faults.downHook, schema: { response: { 200: CancellationSchema } } },
    async (request, reply) => {
      const key = keyFromPath(request.raw.url ?? '', '/shipments/', '/cancel');
      if (key === undefined) throw new Problem(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      await faults.beforeCommit();
      const { view, changed } = ledger.cancel(key, new Date().toISOString());
      if (changed) faults.afterCommit(request.log, { key });
      if (changed && faults.dropsResponse()) {
        request.log.warn({ key }, 'fault: cancel committed, dropping the response');
        killConnection(request, reply);
        return reply;
      }
      return reply.code(200).send({ key, shipmentId: view.shipmentId, status: view.status });
    },
  );
  return app;
}
