// The reservation service's HTTP routes, and how each ledger outcome is answered:
//
//   POST /reservations                 Idempotency-Key → one hold per key, answer stored and replayed
//   POST /reservations/{key}/confirm   keep the held stock; idempotent by state
//   POST /reservations/{key}/release   give it back once, or fence a hold that has not arrived
//   PUT  /inventory/{sku}              sandbox set-up
//   GET  /inventory/{sku}, /reservations/{key}   reads for auditors; never faulted
import { Type } from 'typebox';
import { Problem } from '../../common/http/problem.js';
import type { FaultInjector } from '../shared/faults.js';
import type { SandboxApp } from '../shared/http.js';
import type { EffectResponse, IdempotentExecutor } from '../shared/idempotency.js';
import {
  fencedRefusal,
  refusal,
  registerKeyedActions,
  registerKeyedEffect,
  registerKeyedRead,
  type ActionOutcome,
} from '../shared/keyed-routes.js';
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
  switch (outcome.kind) {
    case 'held':
      return { status: 201, body: outcome.reservation };
    case 'fenced':
      return fencedRefusal('reservation', 'released', 'held');
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

/** A confirm or a release as an action by key: its state, or the refusal it gets. */
function transition(outcome: Transition): ActionOutcome {
  return { changed: outcome.changed, answer: outcome.kind === 'ok' ? outcome.state : transitionRefusal(outcome) };
}

export function registerReservationRoutes(
  app: SandboxApp,
  { ledger, executor, faults }: { ledger: ReservationLedger; executor: IdempotentExecutor; faults: FaultInjector },
): void {
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

  registerKeyedEffect(
    app,
    { executor, faults },
    {
      path: '/reservations',
      schemas: { body: HoldRequestSchema, created: HeldReservationSchema },
      // The default is part of the request: `{items}` and `{items, ttlSeconds: 900}` are
      // the same request, so a client that starts spelling the default out still replays.
      request: (body): HoldRequest => ({ items: body.items, ttlSeconds: body.ttlSeconds ?? DEFAULT_HOLD_TTL_SECONDS }),
      // Inside the key's transaction: the hold and its stored answer commit together.
      effect: (key, body) => holdAnswer(ledger.hold(key, body)),
    },
  );
  registerKeyedRead(app, {
    prefix: '/reservations/',
    view: ReservationViewSchema,
    read: (key) => ledger.getReservation(key),
    notFound: (key) => new Problem(404, 'reservation_not_found', notFoundDetail(key)),
  });
  registerKeyedActions(app, faults, {
    prefix: '/reservations/',
    response: ReservationStateSchema,
    actions: { '/confirm': (key) => transition(ledger.confirm(key)), '/release': (key) => transition(ledger.release(key)) },
    checkBody: requireNoInput,
  });
}
