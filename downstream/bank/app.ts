// The sandbox bank (DESIGN §6): a payment service with its own idempotency keys, used by
// the worker's activities, the tests and the benchmarks as a stand-in for a real PSP.
//
//   POST /charges            Idempotency-Key → one debit per key, answer stored and replayed
//   POST /charges/{key}/reverse  refund once, or fence a charge that has not arrived
//   GET  /charges/{key}, /accounts/{id}   reads for auditors; never faulted
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type Database from 'better-sqlite3';
import type { Logger } from '../../common/logger.js';
import { FaultInjector, killConnection, registerFaultRoutes } from '../shared/faults.js';
import { bindRequestContext } from '../shared/log-context.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from '../shared/http.js';
import { keyFromPath } from '../shared/idempotency-key.js';
import { IdempotentExecutor, idempotencyKeyOf, requireIdempotencyKey, sendExecution } from '../shared/idempotency.js';
import { ProblemError } from '../shared/problem.js';
import { BankStore, type ChargeRequest } from './store.js';

export interface BankDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
  /** Open the demo accounts when the ledger is empty (default true). */
  seed?: boolean;
  /** Source of the fault probabilities' draws (tests make it deterministic). */
  random?: () => number;
}

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. EUR' });
const AccountId = Type.String({ minLength: 1, maxLength: 128 });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const AccountSchema = Type.Object(
  { id: AccountId, currency: Currency, balance: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT }) },
  { additionalProperties: false },
);

export const ChargeRequestSchema = Type.Object(
  {
    account: AccountId,
    amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'minor units' }),
    currency: Currency,
  },
  { additionalProperties: false },
);

const ChargeStatus = Type.Union([
  Type.Literal('captured'),
  Type.Literal('reversed'),
  Type.Literal('fenced'),
  Type.Literal('declined'),
]);

export const CapturedChargeSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  account: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: Type.Literal('captured'),
  createdAt: Type.String({ format: 'date-time' }),
});

export const ChargeViewSchema = Type.Object({
  key: Type.String(),
  chargeId: Nullable(Type.String()),
  account: Nullable(Type.String()),
  amount: Nullable(Type.Integer()),
  currency: Nullable(Type.String()),
  status: ChargeStatus,
  createdAt: Type.String({ format: 'date-time' }),
  reversedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const ReversalSchema = Type.Object({
  key: Type.String(),
  chargeId: Nullable(Type.String()),
  status: ChargeStatus,
  refunded: Type.Integer(),
});

export function buildApp(deps: BankDeps): SandboxApp {
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installHttpEdge(app);
  bindRequestContext(app, [{ prefix: '/charges/', suffixes: ['/reverse', ''] }]);

  const store = new BankStore(deps.db);
  if (deps.seed ?? true) store.seedIfEmpty();
  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs });
  const faults = new FaultInjector(deps.faults, deps.random);

  let stopPurging = () => {};
  app.addHook('onReady', async () => {
    stopPurging = executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed'));
  });
  app.addHook('onClose', async () => stopPurging());
  registerFaultRoutes(app, faults);

  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  // Sandbox set-up: creates or replaces an account. Not keyed and never faulted.
  app.post('/accounts', { schema: { body: AccountSchema, response: { 201: AccountSchema } } }, async (request, reply) => {
    return reply.code(201).send(store.upsertAccount(request.body));
  });

  app.get(
    '/accounts/:id',
    { schema: { params: Type.Object({ id: Type.String() }), response: { 200: AccountSchema } } },
    async (request) => {
      const account = store.getAccount(request.params.id);
      if (!account) throw new ProblemError(404, 'account_not_found', `there is no account ${request.params.id}`);
      return account;
    },
  );

  app.post(
    '/charges',
    {
      onRequest: faults.downHook,
      preValidation: requireIdempotencyKey,
      schema: { body: ChargeRequestSchema, response: { 201: CapturedChargeSchema } },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      const body: ChargeRequest = request.body;
      const execution = await executor.execute({
        key,
        endpoint: 'POST /charges',
        body,
        effect: () => store.charge(key, body),
        beforeCommit: () => faults.beforeCommit(),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys contain `/` (`acme/order-42/charge`), so the key is read from the raw path:
  // percent-encoded or not, `/charges/<key>` and `/charges/<key>/reverse` both work.
  app.get('/charges/*', { schema: { response: { 200: ChargeViewSchema } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', '/charges/');
    const charge = key === undefined ? undefined : store.getCharge(key);
    if (!charge) throw new ProblemError(404, 'charge_not_found', `no charge has been made or fenced under key ${key ?? ''}`);
    return charge;
  });

  app.post('/charges/*', { onRequest: faults.downHook, schema: { response: { 200: ReversalSchema } } }, async (request, reply) => {
    const key = keyFromPath(request.raw.url ?? '', '/charges/', '/reverse');
    if (key === undefined) throw new ProblemError(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
    await faults.beforeCommit();
    const { reversal, changed } = store.reverse(key);
    if (changed && faults.dropsResponse()) {
      request.log.warn({ key }, 'fault: reversal committed, dropping the response');
      killConnection(request, reply);
      return reply;
    }
    return reply.code(200).send(reversal);
  });

  return app;
}
