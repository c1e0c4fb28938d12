// The bank's HTTP routes, and how each ledger outcome is answered:
//
//   POST /charges                Idempotency-Key → one debit per key, answer stored and replayed
//   POST /charges/{key}/reverse  refund once, or fence a charge that has not arrived
//   GET  /charges/{key}, /accounts/{id}   reads for auditors; never faulted
import { Type } from 'typebox';
import { Problem } from '../../common/http/problem.js';
import { FaultInjector, killConnection } from '../shared/faults.js';
import type { SandboxApp } from '../shared/http.js';
import { idempotencyKeyOf, keyFromPath, requireIdempotencyKey } from '../shared/idempotency-key.js';
import { sendExecution, type EffectResponse, type IdempotentExecutor } from '../shared/idempotency.js';
import type { BankLedger, ChargeOutcome, ChargeRequest } from './ledger.js';
import { AccountSchema, CapturedChargeSchema, ChargeRequestSchema, ChargeViewSchema, ReversalSchema } from './schemas.js';

/** The answer a charge outcome gets; business refusals are answers too, stored and replayed. */
export function chargeAnswer(outcome: ChargeOutcome): EffectResponse {
  const refusal = (status: number, code: string, detail: string): EffectResponse => ({
    status,
    body: new Problem(status, code, detail).body(),
  });
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
    { schema: { params: Type.Object({ id: Type.String() }), response: { 200: AccountSchema } } },
    async (request) => {
      const account = ledger.getAccount(request.params.id);
      if (!account) throw new Problem(404, 'account_not_found', `there is no account ${request.params.id}`);
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
        // Inside the key's transaction: the debit and its stored answer commit together.
        effect: () => chargeAnswer(ledger.charge(key, body)),
        beforeCommit: () => faults.beforeCommit(),
        afterCommit: () => faults.afterCommit(request.log, { key }),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );

  // Keys contain `/` (`acme/order-42/charge`), so the key is read from the raw path:
  // percent-encoded or not, `/charges/<key>` and `/charges/<key>/reverse` both work.
  app.get('/charges/*', { schema: { response: { 200: ChargeViewSchema } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', '/charges/');
    const charge = key === undefined ? undefined : ledger.getCharge(key);
    if (!charge) throw new Problem(404, 'charge_not_found', `no charge has been made or fenced under key ${key ?? ''}`);
    return charge;
  });

  app.post(
    '/charges/*',
    { onRequest: faults.downHook, schema: { response: { 200: ReversalSchema } } },
    async (request, reply) => {
      const key = keyFromPath(request.raw.url ?? '', '/charges/', '/reverse');
      if (key === undefined) throw new Problem(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      await faults.beforeCommit();
      const { reversal, changed } = ledger.reverse(key);
      if (changed) faults.afterCommit(request.log, { key });
      if (changed && faults.dropsResponse()) {
        request.log.warn({ key }, 'fault: reversal committed, dropping the response');
        killConnection(request, reply);
        return reply;
      }
      return reply.code(200).send(reversal);
    },
  );
}
