// The reservation service's HTTP routes, and how each ledger outcome is answered:
//
//   POST /reservations                 Idempotency-Key → one hold per key, answer stored and replayed
//   POST /reservations/{key}/confirm   keep the held stock; idempotent by state
//   POST /reservations/{key}/release   give it back once, or fence a hold that has not arrived
//   PUT  /inventory/{sku}              sandbox set-up
//   GET  /inventory/{sku}, /reservations/{key}   reads for auditors; never faulted
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Problem, sendProblem } from '../../common/http/problem.js';
import { killConnection, type FaultInjector } from '../shared/faults.js';
import type { SandboxApp } from '../shared/http.js';
import { idempotencyKeyOf, keyFromPath, requireIdempotencyKey } from '../shared/idempotency-key.js';
import { sendExecution, type EffectResponse, type IdempotentExecutor } from '../shared/idempotency.js';
import {
  DEFAULT_HOLD_TTL_SECONDS,
  type HoldOutcome,
  type HoldRequest,
  type ReservationLedger,
  type Transition,
} from './ledger.js';
import {
  HeldReservationSchema,
  HoldRequestSchema,
  ReservationStateSchema,
  ReservationViewSchema,
  SetStockSchema,
  Sku,
  StockSchema,
} from './schemas.js';

const notFoundDetail = (key: string) => `no reservation has been made or fenced under key ${key}`;

/** The answer a hold outcome gets; refusals are answers too, stored and replayed. */
export function holdAnswer(outcome: HoldOutcome): EffectResponse {
  const refusal = (status: number, code: string, detail: string, extensions: Record<string, unknown> = {}): EffectResponse => ({
    status,
    body: new Problem(status, code, detail, { extensions }).body(),
  });
  switch (outcome.kind) {
    case 'held':
      return { status: 201, body: outcome.reservation };
    case 'fenced':
      return refusal(
        410,
        'reservation_fenced',
        'this reservation was released before it arrived; it will never be held. Use a new key for a new reservation',
      );
    case 'unknown_sku':
      return refusal(422, 'unknown_sku', `no such SKU: ${outcome.skus.join(', ')}`, { skus: outcome.skus });
    case 'out_of_stock':
      return refusal(
        422,
        'out_of_stock',
        `not enough stock for ${outcome.shortages.map((s) => `${s.sku} (${s.requested} requested, ${s.available} available)`).join(', ')}; nothing was held`,
        { shortages: outcome.shortages },
      );
  }
}

/** The refusal a confirm or a release gets when it did not succeed. */
export function transitionRefusal(outcome: Exclude<Transition, { kind: 'ok' }>): Problem {
  switch (outcome.kind) {
    case 'not_found':
      return new Problem(404, 'reservation_not_found', notFoundDetail(outcome.key));
    case 'expired':
      return new Problem(
        422,
        'reservation_expired',
        `the hold under key ${outcome.key} expired at ${outcome.expiresAt ?? '?'}; its stock was given back`,
      );
    case 'released':
      return new Problem(
        422,
        'reservation_released',
        `the reservation under key ${outcome.key} was released; it can no longer be confirmed`,
      );
    case 'declined':
      return new Problem(
        422,
        'reservation_declined',
        `the reservation under key ${outcome.key} was declined (${outcome.declineCode ?? 'refused'}); nothing is held`,
      );
  }
}

/** confirm and release take no input: no body, an empty one, or `{}`; anything else is a mistake. */
function requireNoInput(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  throw new Problem(400, 'invalid_request', 'confirm and release take no input: send no body or {}', {
    extensions: {
      errors:
        fields.length > 0
          ? fields.map((field) => ({ field, message: 'is not an allowed field' }))
          : [{ field: 'body', message: 'must be empty or {}' }],
    },
  });
}

/**
 * Answers confirm or release. When the call committed a change and the crash or drop fault
 * fires, the answer is lost instead; a retry then finds the new state and answers the same.
 */
function sendTransition(request: FastifyRequest, reply: FastifyReply, outcome: Transition, faults: FaultInjector): FastifyReply {
  if (outcome.changed) faults.afterCommit(request.log, { url: request.url });
  if (outcome.changed && faults.dropsResponse(request.log, { url: request.url })) {
    killConnection(request, reply);
    return reply;
  }
  if (outcome.kind === 'ok') return reply.code(200).send(outcome.state);
  return sendProblem(reply, transitionRefusal(outcome));
}

export function registerReservationRoutes(
  app: SandboxApp,
  { ledger, executor, faults }: { ledger: ReservationLedger; executor: IdempotentExecutor; faults: FaultInjector },
): void {
  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  // Sandbox set-up: sets what can still be reserved. Not keyed and never faulted.
  app.put(
    '/inventory/:sku',
    { schema: { params: Type.Object({ sku: Sku }), body: SetStockSchema, response: { 200: StockSchema } } },
    async (request) => ledger.setAvailable(request.params.sku, request.body.available),
  );

  app.get(
    '/inventory/:sku',
    { schema: { params: Type.Object({ sku: Sku }), response: { 200: StockSchema } } },
    async (request) => {
      const stock = ledger.getStock(request.params.sku);
      if (!stock) throw new Problem(404, 'unknown_sku', `there is no SKU ${request.params.sku}`);
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
        // Inside the key's transaction: the hold and its stored answer commit together.
        effect: () => holdAnswer(ledger.hold(key, body)),
        beforeCommit: () => faults.beforeCommit(request.log),
        afterCommit: () => faults.afterCommit(request.log, { key }),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys contain `/` (`acme/order-42/reserve`), so the key is read from the raw path:
  // percent-encoded or not, `/reservations/<key>` and `/reservations/<key>/confirm` both work.
  app.get('/reservations/*', { schema: { response: { 200: ReservationViewSchema } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', '/reservations/');
    const reservation = key === undefined ? undefined : ledger.getReservation(key);
    if (!reservation) throw new Problem(404, 'reservation_not_found', notFoundDetail(key ?? ''));
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
        throw new Problem(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      }
      requireNoInput(request.body);
      await faults.beforeCommit(request.log);
      const outcome = confirmKey !== undefined ? ledger.confirm(confirmKey) : ledger.release(releaseKey!);
      return sendTransition(request, reply, outcome, faults);
    },
  );
}
