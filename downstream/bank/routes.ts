// The bank's HTTP routes, and how each ledger outcome is answered:
//
//   POST /charges                Idempotency-Key → one debit per key, answer stored and replayed
//   POST /charges/{key}/reverse  refund once, or fence a charge that has not arrived
//   POST /credits                Idempotency-Key → one credit per key, answer stored and replayed
//   POST /credits/{key}/reverse  take the credit back once, or fence a credit that has not arrived
//   GET  /charges/{key}, /credits/{key}, /accounts/{id}   reads for auditors; never faulted
import { Type, type TSchema } from 'typebox';
import { Problem } from '../../common/http/problem.js';
import { FaultInjector, killConnection } from '../shared/faults.js';
import type { SandboxApp } from '../shared/http.js';
import { idempotencyKeyOf, keyFromPath, requireIdempotencyKey } from '../shared/idempotency-key.js';
import { sendExecution, type EffectResponse, type IdempotentExecutor } from '../shared/idempotency.js';
import type { BankLedger, ChargeOutcome, CreditOutcome, MovementRequest, ReversalOutcome } from './ledger.js';
import {
  AccountSchema,
  AccountViewSchema,
  CapturedChargeSchema,
  ChargeRequestSchema,
  ChargeViewSchema,
  CreditReversalSchema,
  CreditRequestSchema,
  CreditSchema,
  CreditViewSchema,
  ReversalSchema,
} from './schemas.js';

const refusal = (status: number, code: string, detail: string): EffectResponse => ({
  status,
  body: new Problem(status, code, detail).body(),
});

/** The answer a charge outcome gets; business refusals are answers too, stored and replayed. */
export function chargeAnswer(outcome: ChargeOutcome): EffectResponse {
  switch (outcome.kind) {
    case 'captured':
      return { status: 201, body: outcome.charge };
    case 'fenced':
      return refusal(
        410,
        'charge_fenced',
        'this charge was reversed before it arrived; it will never be executed. Use a new key for a new charge',
      );
    case 'account_not_found':
      return refusal(422, 'account_not_found', `there is no account ${outcome.account}`);
    case 'currency_mismatch':
      return refusal(422, 'currency_mismatch', `account ${outcome.account} holds ${outcome.held}, not ${outcome.requested}`);
    case 'insufficient_funds':
      return refusal(402, 'insufficient_funds', `account ${outcome.account} cannot cover ${outcome.amount} ${outcome.currency}`);
  }
}

/** The answer a credit outcome gets: the charge's codes, except that no credit lacks funds. */
export function creditAnswer(outcome: CreditOutcome): EffectResponse {
  switch (outcome.kind) {
    case 'credited':
      return { status: 201, body: outcome.credit };
    case 'fenced':
      return refusal(
        410,
        'credit_fenced',
        'this credit was reversed before it arrived; it will never be executed. Use a new key for a new credit',
      );
    case 'account_not_found':
      return refusal(422, 'account_not_found', `there is no account ${outcome.account}`);
    case 'currency_mismatch':
      return refusal(422, 'currency_mismatch', `account ${outcome.account} holds ${outcome.held}, not ${outcome.requested}`);
  }
}

/** How one kind of entry (charges, credits) is reached over HTTP. */
interface EntryRoutes {
  /** `/charges`: the keyed POST, and the prefix of the reads and reversals by key. */
  path: '/charges' | '/credits';
  /** The noun in messages and the code of a missing entry (`charge_not_found`). */
  noun: 'charge' | 'credit';
  schemas: { request: TSchema; applied: TSchema; view: TSchema; reversal: TSchema };
  /**
   * Inside the key's transaction, with the instant the key was claimed: the balance change
   * and its stored answer commit together.
   */
  apply(key: string, req: MovementRequest, claimedAt: number): EffectResponse;
  read(key: string): object | undefined;
  reverse(key: string): ReversalOutcome<object>;
}

export function registerBankRoutes(
  app: SandboxApp,
  { ledger, executor, faults }: { ledger: BankLedger; executor: IdempotentExecutor; faults: FaultInjector },
): void {
  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  // Sandbox set-up: creates or replaces an account. Not keyed and never faulted.
  app.post('/accounts', { schema: { body: AccountSchema, response: { 201: AccountSchema } } }, async (request, reply) => {
    return reply.code(201).send(ledger.upsertAccount(request.body));
  });

  app.get(
    '/accounts/:id',
    { schema: { params: Type.Object({ id: Type.String() }), response: { 200: AccountViewSchema } } },
    async (request) => {
      const account = ledger.getAccount(request.params.id);
      if (!account) throw new Problem(404, 'account_not_found', `there is no account ${request.params.id}`);
      return account;
    },
  );

  registerEntryRoutes(app, executor, faults, {
    path: '/charges',
    noun: 'charge',
    schemas: { request: ChargeRequestSchema, applied: CapturedChargeSchema, view: ChargeViewSchema, reversal: ReversalSchema },
    apply: (key, req, claimedAt) => chargeAnswer(ledger.charge(key, req, claimedAt)),
    read: (key) => ledger.getCharge(key),
    reverse: (key) => ledger.reverseCharge(key),
  });
  registerEntryRoutes(app, executor, faults, {
    path: '/credits',
    noun: 'credit',
    schemas: { request: CreditRequestSchema, applied: CreditSchema, view: CreditViewSchema, reversal: CreditReversalSchema },
    apply: (key, req, claimedAt) => creditAnswer(ledger.credit(key, req, claimedAt)),
    read: (key) => ledger.getCredit(key),
    reverse: (key) => ledger.reverseCredit(key),
  });
}

/** The keyed POST, the read by key and the reversal by key of one kind of entry. */
function registerEntryRoutes(app: SandboxApp, executor: IdempotentExecutor, faults: FaultInjector, entry: EntryRoutes): void {
  const prefix = `${entry.path}/`;

  app.post(
    entry.path,
    {
      onRequest: faults.downHook,
      preValidation: requireIdempotencyKey,
      schema: { body: entry.schemas.request, response: { 201: entry.schemas.applied } },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      const body = request.body as MovementRequest;
      const execution = await executor.execute({
        key,
        endpoint: `POST ${entry.path}`,
        body,
        effect: (claimedAt) => entry.apply(key, body, claimedAt),
        beforeCommit: () => faults.beforeCommit(request.log),
        afterCommit: () => faults.afterCommit(request.log, { key }),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys contain `/` (`acme/order-42/charge`), so the key is read from the raw path:
  // percent-encoded or not, `/charges/<key>` and `/charges/<key>/reverse` both work.
  app.get(`${prefix}*`, { schema: { response: { 200: entry.schemas.view } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', prefix);
    const found = key === undefined ? undefined : entry.read(key);
    if (!found) {
      throw new Problem(404, `${entry.noun}_not_found`, `no ${entry.noun} has been made or fenced under key ${key ?? ''}`);
    }
    return found;
  });

  // Not keyed by a header: the path names the entry, and the reversal is idempotent by the
  // entry's state, so a repeated call finds it reversed and answers the same.
  app.post(
    `${prefix}*`,
    { onRequest: faults.downHook, schema: { response: { 200: entry.schemas.reversal } } },
    async (request, reply) => {
      const key = keyFromPath(request.raw.url ?? '', prefix, '/reverse');
      if (key === undefined) throw new Problem(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      await faults.beforeCommit(request.log);
      const { reversal, changed } = entry.reverse(key);
      if (changed) faults.afterCommit(request.log, { key });
      if (changed && faults.dropsResponse(request.log, { key })) {
        killConnection(request, reply);
        return reply;
      }
      return reply.code(200).send(reversal);
    },
  );
}
