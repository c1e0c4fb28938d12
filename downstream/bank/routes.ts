// The bank's HTTP routes, and how each ledger outcome is answered:
//
//   POST /charges                Idempotency-Key → one debit per key, answer stored and replayed
//   POST /charges/{key}/reverse  refund once, or fence a charge that has not arrived
//   POST /credits                Idempotency-Key → one credit per key, answer stored and replayed
//   POST /credits/{key}/reverse  take the credit back once, or fence a credit that has not arrived
//   GET  /charges/{key}, /credits/{key}, /accounts/{id}   reads for auditors; never faulted
import { Type } from 'typebox';
import { Problem } from '../../common/http/problem.js';
import type { FaultInjector } from '../shared/faults.js';
import type { SandboxApp } from '../shared/http.js';
import type { EffectResponse, IdempotentExecutor } from '../shared/idempotency.js';
import { fencedRefusal, refusal, registerKeyedActions, registerKeyedEffect, registerKeyedRead } from '../shared/keyed-routes.js';
import type { BankLedger, ChargeOutcome, CreditOutcome, MovementRequest, Refusal, ReversalOutcome } from './ledger.js';
import { AccountSchema, AccountViewSchema, MOVEMENT_SCHEMAS } from './schemas.js';

/** The answer a charge outcome gets; business refusals are answers too, stored and replayed. */
export function chargeAnswer(outcome: ChargeOutcome): EffectResponse {
  switch (outcome.kind) {
    case 'captured':
      return { status: 201, body: outcome.charge };
    case 'insufficient_funds':
      return refusal(402, 'insufficient_funds', `account ${outcome.account} cannot cover ${outcome.amount} ${outcome.currency}`);
    default:
      return movementRefusal('charge', outcome);
  }
}

/** The answer a credit outcome gets: the charge's codes, except that no credit lacks funds. */
export function creditAnswer(outcome: CreditOutcome): EffectResponse {
  return outcome.kind === 'credited' ? { status: 201, body: outcome.credit } : movementRefusal('credit', outcome);
}

/** The refusals a charge and a credit share. */
function movementRefusal(noun: 'charge' | 'credit', outcome: Refusal): EffectResponse {
  switch (outcome.kind) {
    case 'fenced':
      return fencedRefusal(noun, 'reversed', 'executed');
    case 'account_not_found':
      return refusal(422, 'account_not_found', `there is no account ${outcome.account}`);
    case 'currency_mismatch':
      return refusal(422, 'currency_mismatch', `account ${outcome.account} holds ${outcome.held}, not ${outcome.requested}`);
  }
}

/** How one kind of entry (charges, credits) is reached over HTTP. */
interface EntryRoutes {
  /**
   * Names the collection (`/charges`: the keyed POST, and the prefix of the reads and
   * reversals by key), its schemas, and the code of a missing entry (`charge_not_found`).
   */
  noun: keyof typeof MOVEMENT_SCHEMAS;
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
    noun: 'charge',
    apply: (key, req, claimedAt) => chargeAnswer(ledger.charge(key, req, claimedAt)),
    read: (key) => ledger.getCharge(key),
    reverse: (key) => ledger.reverseCharge(key),
  });
  registerEntryRoutes(app, executor, faults, {
    noun: 'credit',
    apply: (key, req, claimedAt) => creditAnswer(ledger.credit(key, req, claimedAt)),
    read: (key) => ledger.getCredit(key),
    reverse: (key) => ledger.reverseCredit(key),
  });
}

/** The keyed POST, the read by key and the reversal by key of one kind of entry. */
function registerEntryRoutes(app: SandboxApp, executor: IdempotentExecutor, faults: FaultInjector, entry: EntryRoutes): void {
  const path = `/${entry.noun}s`;
  const prefix = `${path}/`;
  const schemas = MOVEMENT_SCHEMAS[entry.noun];
  registerKeyedEffect(
    app,
    { executor, faults },
    {
      path,
      schemas: { body: schemas.request, created: schemas.applied },
      effect: (key, body, claimedAt) => entry.apply(key, body as MovementRequest, claimedAt),
    },
  );
  registerKeyedRead(app, {
    prefix,
    view: schemas.view,
    read: entry.read,
    notFound: (key) => new Problem(404, `${entry.noun}_not_found`, `no ${entry.noun} has been made or fenced under key ${key}`),
  });

  registerKeyedActions(app, faults, {
    prefix,
    response: schemas.reversal,
    actions: {
      '/reverse': (key) => {
        const { reversal, changed } = entry.reverse(key);
        return { changed, answer: reversal };
      },
    },
  });
}
