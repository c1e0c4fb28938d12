// The sandbox reservation service (DESIGN §6): an inventory-hold service with its own
// idempotency keys, used by the worker's activities, the tests and the benchmarks as a
// stand-in for a real inventory system.
//
//   POST /reservations                 Idempotency-Key → one hold per key, answer stored and replayed
//   POST /reservations/{key}/confirm   keep the held stock; idempotent by state
//   POST /reservations/{key}/release   give it back once, or fence a hold that has not arrived
//   PUT  /inventory/{sku}              sandbox set-up
//   GET  /inventory/{sku}, /reservations/{key}   reads for auditors; never faulted
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type Database from 'better-sqlite3';
import type { Logger } from '../../common/logger.js';
import { FaultInjector, killConnection, registerFaultRoutes } from '../shared/faults.js';
import { bindRequestContext } from '../shared/log-context.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from '../shared/http.js';
import { keyFromPath } from '../shared/idempotency-key.js';
import { IdempotentExecutor, idempotencyKeyOf, requireIdempotencyKey, sendExecution } from '../shared/idempotency.js';
import { problemBody, ProblemError, sendProblem } from '../shared/problem.js';
import { DEFAULT_HOLD_TTL_SECONDS, ReservationStore, type HoldRequest, type Transition } from './store.js';

export interface ReservationsDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
  /** Stock the demo SKUs when the inventory is empty (default true). */
  seed?: boolean;
  /** Source of the fault probabilities' draws (tests make it deterministic). */
  random?: () => number;
  /** The clock for holds' expiry and keys' TTL (tests move it). */
  now?: () => number;
  /** How often the ledger expires due holds on its own (default 1 s). */
  sweepIntervalMs?: number;
}

const Sku = Type.String({ minLength: 1, maxLength: 128 });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const StockSchema = Type.Object({
  sku: Type.String(),
  available: Type.Integer(),
  held: Type.Integer(),
});

export const SetStockSchema = Type.Object(
  { available: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'what can still be reserved' }) },
  { additionalProperties: false },
);

const Item = Type.Object({ sku: Sku, quantity: Type.Integer({ minimum: 1, maximum: 1000 }) }, { additionalProperties: false });

export const HoldRequestSchema = Type.Object(
  {
    items: Type.Array(Item, { minItems: 1, maxItems: 100 }),
    ttlSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 86_400, description: `how long the hold lasts (default ${DEFAULT_HOLD_TTL_SECONDS})` }),
    ),
  },
  { additionalProperties: false },
);

const Status = Type.Union([
  Type.Literal('held'),
  Type.Literal('confirmed'),
  Type.Literal('released'),
  Type.Literal('expired'),
  Type.Literal('fenced'),
  Type.Literal('declined'),
]);

export const HeldReservationSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  items: Type.Array(Item),
  status: Type.Literal('held'),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

export const ReservationViewSchema = Type.Object({
  key: Type.String(),
  reservationId: Nullable(Type.String()),
  items: Type.Array(Item),
  status: Status,
  expiresAt: Nullable(Timestamp),
  createdAt: Timestamp,
  confirmedAt: Nullable(Timestamp),
  releasedAt: Nullable(Timestamp),
});

export const ReservationStateSchema = Type.Object({
  key: Type.String(),
  reservationId: Nullable(Type.String()),
  status: Status,
});

export function buildApp(deps: ReservationsDeps): SandboxApp {
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installHttpEdge(app);
  bindRequestContext(app, [{ prefix: '/reservations/', suffixes: ['/confirm', '/release', ''] }]);

  const now = deps.now ?? Date.now;
  const store = new ReservationStore(deps.db, now);
  if (deps.seed ?? true) store.seedIfEmpty();
  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs, now });
  const faults = new FaultInjector(deps.faults, deps.random);

  let stopTimers = () => {};
  app.addHook('onReady', async () => {
    const stopPurging = executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed'));
    const stopSweeping = store.startSweeping(deps.sweepIntervalMs ?? 1000, (err) =>
      app.log.warn({ err }, 'expiring due holds failed'),
    );
    stopTimers = () => {
      stopPurging();
      stopSweeping();
    };
  });
  app.addHook('onClose', async () => stopTimers());
  registerFaultRoutes(app, faults);

  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  // Sandbox set-up: sets what can still be reserved. Not keyed and never faulted.
  app.put(
    '/inventory/:sku',
    { schema: { params: Type.Object({ sku: Sku }), body: SetStockSchema, response: { 200: StockSchema } } },
    async (request) => store.setAvailable(request.params.sku, request.body.available),
  );

  app.get(
    '/inventory/:sku',
    { schema: { params: Type.Object({ sku: Sku }), response: { 200: StockSchema } } },
    async (request) => {
      const stock = store.getStock(request.params.sku);
      if (!stock) throw new ProblemError(404, 'unknown_sku', `there is no SKU ${request.params.sku}`);
      return stock;
    },
  );

  app.post(
    '/reservations',
    {
      onRequest: faults.downHook,
      preValidation: requireIdempotencyKey,
      schema: { body: HoldRequestSchema, response: { 201: HeldReservationSchema } },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      // The default is part of the request: `{items}` and `{items, ttlSeconds: 900}` are
      // the same request, so a client that starts spelling the default out still replays.
      const body: HoldRequest = { items: request.body.items, ttlSeconds: request.body.ttlSeconds ?? DEFAULT_HOLD_TTL_SECONDS };
      const execution = await executor.execute({
        key,
        endpoint: 'POST /reservations',
        body,
        effect: () => store.hold(key, body),
        beforeCommit: () => faults.beforeCommit(),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys contain `/` (`acme/order-42/reserve`), so the key is read from the raw path:
  // percent-encoded or not, `/reservations/<key>` and `/reservations/<key>/confirm` both work.
  app.get('/reservations/*', { schema: { response: { 200: ReservationViewSchema } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', '/reservations/');
    const reservation = key === undefined ? undefined : store.getReservation(key);
    if (!reservation) {
      throw new ProblemError(404, 'reservation_not_found', `no reservation has been made or fenced under key ${key ?? ''}`);
    }
    return reservation;
  });

  app.post(
    '/reservations/*',
    { onRequest: faults.downHook, schema: { response: { 200: ReservationStateSchema } } },
    async (request, reply) => {
      const url = request.raw.url ?? '';
      const confirmKey = keyFromPath(url, '/reservations/', '/confirm');
      const releaseKey = confirmKey === undefined ? keyFromPath(url, '/reservations/', '/release') : undefined;
      if (confirmKey === undefined && releaseKey === undefined) {
        throw new ProblemError(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      }
      requireNoInput(request.body);
      await faults.beforeCommit();
      const outcome = confirmKey !== undefined ? store.confirm(confirmKey) : store.release(releaseKey!);
      return sendTransition(request, reply, outcome, faults);
    },
  );

  return app;
}

/** confirm and release take no input: no body, an empty one, or `{}`; anything else is a mistake. */
function requireNoInput(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  throw new ProblemError(400, 'invalid_request', 'confirm and release take no input: send no body or {}', {
    errors:
      fields.length > 0
        ? fields.map((field) => ({ field, message: 'is not an allowed field' }))
        : [{ field: 'body', message: 'must be empty or {}' }],
  });
}

/**
 * Answers confirm or release. When the call committed a change and the drop fault fires,
 * the answer is lost instead; a retry then finds the new state and answers the same.
 */
function sendTransition(request: FastifyRequest, reply: FastifyReply, outcome: Transition, faults: FaultInjector): FastifyReply {
  if (outcome.changed && faults.dropsResponse()) {
    request.log.warn({ url: request.url }, 'fault: committed, dropping the response');
    killConnection(request, reply);
    return reply;
  }
  if (!outcome.ok) return sendProblem(reply, problemBody(outcome.status, outcome.code, outcome.detail));
  return reply.code(200).send(outcome.state);
}
