// The auditor of a chaos run: after every operation settled it reads what actually
// happened (the bank's and the reservation service's ledgers) and what the API says
// happened (through BOTH instances, as the operation's tenant), and checks the five
// invariants per operation (I1 money moves at most once, I2 no hold left by a failed
// operation and none confirmed without a charge, I3 every operation ends or is marked
// NeedsAttention, I4 every retry sees the same outcome, I5 nothing accepted is lost), then
// the global conservation of money and stock.
//
// Each operation is read through its definition: every step's `effect` names the ledger
// row under the step's key and the states in which its effect is in force. A succeeded
// operation has every step's effect in force, a failed one none (a cancelled one included).
// The sandboxes' vocabulary says how a row reads: a charge takes money from an account, a
// credit gives it to one, a reservation holds or keeps items; so money is conserved across
// transfers, and what left the accounts is what succeeded operations charged out of them.
// A cancel the API answered 202 must end the operation cancelled. When the tenants have a
// completion webhook, every finished operation must have reached the receiver at least
// once with a valid signature, the same body on every redelivery, and that body must be the
// outcome. It trusts no client record it can check on a ledger.
import { setTimeout as sleep } from 'node:timers/promises';
import { CANCELLED_CODE } from '../../workflows/contracts.js';
import type { OperationDefinition, StepDefinition } from '../../workflows/definition.js';
import { completionEventId, downstreamKey, operationRef } from '../../workflows/identity.js';
import { builtInRegistry, type OperationRegistry } from '../../workflows/registry.js';
import { canonicalJson } from '../../common/http/fingerprint.js';
import { checkConservation, LedgerTally, type Conservation } from './audit-conservation.js';
import {
  checkCancel,
  checkDeliveries,
  failureCodesOf,
  ruleOf,
  tallyDeliveries,
  type Flag,
  type WebhookTally,
} from './audit-rules.js';
import type { PlannedOp } from './plan.js';
import type { InitialLedgers } from './sandbox-admin.js';
import { outcomeSignature, type OpRecord, type Violation } from './records.js';
import { effectKindOf, isService, itemsOf, moneyOf, type EffectKind, type Service } from './vocabulary.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export interface AuditInput extends InitialLedgers {
  apiUrls: readonly [string, string];
  /** Base URL of each sandbox, by the service name steps use. */
  services: Readonly<Record<Service, string>>;
  /** The definitions the plan was drawn from (the built-in ones unless given). */
  registry?: OperationRegistry;
  /** The Authorization header of each tenant; none in dev mode. */
  authorization?: Readonly<Record<string, string>>;
  ops: PlannedOp[];
  records: Map<string, OpRecord>;
  /** The receiver of the tenants' completion webhooks, when the run has one. */
  webhooks?: WebhookReceiver;
}

/** Finished operations, by how they finished. */
export interface FinishedCounts {
  succeeded: number;
  failed: number;
}

const noneFinished = (): FinishedCounts => ({ succeeded: 0, failed: 0 });

export interface AuditOutcomes extends FinishedCounts {
  /** Still processing with NeedsAttention set (allowed by invariant 3, reported). */
  openNeedsAttention: number;
  /** Still processing without NeedsAttention: a violation of invariant 3. */
  open: number;
  /** Never accepted by the API (every attempt answered 503 or failed on the network). */
  neverStarted: number;
  byCode: Record<string, number>;
  /** Finished operations of each type of the registry. */
  byType: Record<string, FinishedCounts>;
  /** Operations whose resource carries needsAttention: true (terminal or not). */
  needsAttention: number;
}

export interface AuditResult {
  violations: Violation[];
  outcomes: AuditOutcomes;
  /** Ledger and API reads the auditor made. */
  reads: number;
  webhooks?: WebhookTally;
  conservation: Conservation;
}

type Read = { status: number; body: Record<string, unknown> };

/** What one step's effect row says: its state, and whether that is the effect in force. */
interface EffectRead {
  step: StepDefinition;
  service: Service;
  url: string;
  kind: EffectKind | undefined;
  state: string;
  inForce: boolean;
  row: Record<string, unknown>;
}

export async function audit(input: AuditInput): Promise<AuditResult> {
  const registry = input.registry ?? builtInRegistry;
  const { business: BUSINESS_CODES, unavailable: UNAVAILABLE_CODES } = failureCodesOf(registry);
  const violations: Violation[] = [];
  let reads = 0;
  const read = async (url: string, headers: Record<string, string> = {}): Promise<Read> => {
    for (let attempt = 1; ; attempt++) {
      reads++;
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
        const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        if (res.status < 500 || attempt >= 5) return { status: res.status, body };
      } catch (err) {
        if (attempt >= 5) return { status: 0, body: { error: String(err) } };
      }
      await sleep(500 * attempt);
    }
  };
  const outcomes: AuditOutcomes = {
    succeeded: 0,
    failed: 0,
    openNeedsAttention: 0,
    open: 0,
    neverStarted: 0,
    byCode: {},
    byType: Object.fromEntries(registry.types.map((t) => [t, noneFinished()])),
    needsAttention: 0,
  };
  const tally = new LedgerTally();
  const { chargedByAccount, creditedByAccount, confirmedBySku, heldBySku, succeededByAccount, succeededBySku, money } = tally;
  const add = (m: Map<string, number>, k: string, n: number) => tally.add(m, k, n);

  /** Every step's effect row under the operation's keys; a row two steps share (a hold and its confirm) is read once. */
  const readEffects = async (definition: OperationDefinition, workflowId: string, v: Flag): Promise<EffectRead[]> => {
    const byUrl = new Map<string, Promise<Read>>();
    const effects: Array<Promise<EffectRead>> = [];
    for (const step of definition.steps as readonly StepDefinition[]) {
      if (!step.effect) continue;
      const { service } = step;
      if (!isService(service)) {
        v('effects: every step is audited', `${step.name} speaks to ${service}, which the chaos stack does not run`);
        continue;
      }
      const key = downstreamKey(workflowId, step.keySuffix);
      const url = input.services[service] + step.effect.path.replace('{key}', encodeURIComponent(key));
      if (!byUrl.has(url)) byUrl.set(url, read(url));
      const present = step.effect.present;
      effects.push(
        byUrl.get(url)!.then((res) => {
          const state = res.status === 200 ? String(res.body.status) : 'none';
          return {
            step,
            service,
            url,
            kind: effectKindOf(service, step.effect!.path),
            state,
            inForce: present.includes(state),
            row: res.status === 200 ? res.body : {},
          };
        }),
      );
    }
    return Promise.all(effects);
  };

  const auditOne = async (op: PlannedOp): Promise<void> => {
    const rec = input.records.get(op.key);
    const v: Flag = (rule, message) => violations.push({ rule, key: op.key, message });
    const definition = registry.get(op.type);
    if (!definition) {
      v('plan: a definition per operation', `no definition of ${op.type} in the registry`);
      return;
    }
    const ref = operationRef(op.tenant, op.key);
    const path = `/v1/operations/${encodeURIComponent(op.key)}`;
    const auth = input.authorization?.[op.tenant];
    const headers: Record<string, string> = auth ? { authorization: auth } : {};
    const request = moneyOf(op.body);
    const items = itemsOf(op.body);
    const [a0, a1, effects] = await Promise.all([
      read(input.apiUrls[0] + path, headers),
      read(input.apiUrls[1] + path, headers),
      readEffects(definition, ref.workflowId, v),
    ]);

    // What the ledgers hold under this operation's keys, whatever the API says: each row once.
    const seen = new Set<string>();
    for (const e of effects) {
      if (seen.has(e.url)) continue;
      seen.add(e.url);
      if (e.kind?.kind === 'money') {
        const account = String(e.row.account);
        const amount = Number(e.row.amount);
        if (e.inForce) add(e.kind.direction === 'out' ? chargedByAccount : creditedByAccount, account, amount);
        const expected = e.kind.direction === 'out' ? request.payers : request.payees;
        if ((e.inForce || e.state === 'reversed') && (amount !== request.amount || !expected.includes(account))) {
          v(
            'I1 money moves at most once',
            `${e.step.name}: the ${e.service} moved ${String(e.row.amount)} ${e.kind.direction === 'out' ? 'from' : 'to'} ${account}; ` +
              `the request was ${request.amount} ${e.kind.direction === 'out' ? 'from' : 'to'} ${expected.join(', ') || 'no account'}`,
          );
        }
      } else if (e.kind?.kind === 'stock') {
        if (e.state === 'confirmed') for (const i of items) add(confirmedBySku, i.sku, i.quantity);
        if (e.state === 'held') for (const i of items) add(heldBySku, i.sku, i.quantity);
        // A fence (a release that arrived first) is a tombstone without items.
        if (e.state !== 'none' && e.state !== 'fenced' && canonicalJson(e.row.items ?? null) !== canonicalJson(items)) {
          v(
            'I2 reservations',
            `${e.step.name}: the reservation holds ${canonicalJson(e.row.items ?? null)}; the request was ${canonicalJson(items)}`,
          );
        }
      }
    }

    if (a0.status === 404 && a1.status === 404) {
      if (rec?.accepted) v('I5 nothing lost', 'the API accepted it (200/202) and no instance can find it now');
      else outcomes.neverStarted++;
      for (const e of effects) if (e.inForce) v(ruleOf(e.kind), `never started, yet ${e.step.name} is ${e.state}`);
      return;
    }
    if (a0.status !== 200 || a1.status !== 200) {
      v('I4 same outcome through any instance', `GET answered ${a0.status} on api-0 and ${a1.status} on api-1`);
      return;
    }
    const operation = a0.body;
    const status = String(operation.status);
    const sig0 = outcomeSignature(a0.body);
    const sig1 = outcomeSignature(a1.body);
    if (sig0 !== sig1) v('I4 same outcome through any instance', `api-0 says ${sig0}, api-1 says ${sig1}`);
    if (operation.needsAttention === true) outcomes.needsAttention++;
    if (status === 'processing') {
      if (operation.needsAttention === true) outcomes.openNeedsAttention++;
      else {
        outcomes.open++;
        v(
          'I3 every operation ends',
          `still processing at step ${String(operation.step)} after the bound, without NeedsAttention`,
        );
      }
      return;
    }
    for (const seenOutcome of rec?.outcomes ?? []) {
      if (seenOutcome.signature !== sig0)
        v('I4 same outcome through any instance', `a client saw ${seenOutcome.signature} (${seenOutcome.via}); now ${sig0}`);
    }
    if (rec?.timedOut)
      v('I4 same outcome through any instance', 'finished, but its clients could not learn the outcome before the bound');

    const result = (operation.result ?? {}) as Record<string, unknown>;
    const error = (operation.error ?? {}) as Record<string, unknown>;
    const code = status === 'failed' ? String(error.code) : undefined;
    checkCancel(rec, operation, status, code, v);
    if (input.webhooks) checkDeliveries(input.webhooks, completionEventId(ref), operation, v);
    if (status === 'succeeded') {
      outcomes.succeeded++;
      (outcomes.byType[op.type] ??= noneFinished()).succeeded++;
      for (const payer of request.payers) add(succeededByAccount, payer, request.amount);
      for (const payee of request.payees) add(succeededByAccount, payee, -request.amount);
      money.chargedOut += request.amount * (request.payers.length - request.payees.length);
      money.movedBetweenAccounts += request.amount * request.payees.length;
      for (const i of items) add(succeededBySku, i.sku, i.quantity);
      for (const e of effects) {
        if (!e.inForce) {
          v(ruleOf(e.kind), `succeeded, but ${e.step.name} is ${e.state} at the ${e.service}`);
          continue;
        }
        // The result names the rows the steps made: its ids are on them.
        for (const field of Object.keys(e.step.result ?? {})) {
          if (!Object.values(e.row).includes(result[field]))
            v(ruleOf(e.kind), `result.${field} ${String(result[field])} is not on the ${e.service}'s row of ${e.step.name}`);
        }
      }
      if (op.profile === 'doomed') v('plan: designed to fail', `succeeded although ${canonicalJson(op.body)} cannot`);
    } else if (status === 'failed') {
      outcomes.failed++;
      (outcomes.byType[op.type] ??= noneFinished()).failed++;
      outcomes.byCode[code!] = (outcomes.byCode[code!] ?? 0) + 1;
      for (const e of effects) if (e.inForce) v(ruleOf(e.kind), `failed (${code}), but ${e.step.name} is ${e.state}`);
      if (!BUSINESS_CODES.has(code!) && !UNAVAILABLE_CODES.has(code!) && code !== CANCELLED_CODE)
        v('API: stable error codes', `failed with unexpected code ${code}`);
      if (op.profile === 'normal' && BUSINESS_CODES.has(code!))
        v('plan: designed to succeed', `failed with ${code} although its accounts and stock are ample`);
      // A cancel may stop a doomed operation before the step that would have refused it.
      if (op.expectedFailure && !op.expectedFailure.includes(code!) && code !== CANCELLED_CODE)
        v('plan: designed to fail', `failed with ${code}, expected one of ${op.expectedFailure.join(', ')}`);
    } else {
      v('API: operation resource', `unknown status ${status}`);
    }
  };

  const queue = [...input.ops];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let op = queue.shift(); op; op = queue.shift()) await auditOne(op);
    }),
  );

  const conservation = await checkConservation(
    tally,
    {
      bankUrl: input.services.bank,
      reservationsUrl: input.services.reservations,
      initialBalances: input.initialBalances,
      initialStock: input.initialStock,
      read,
      settled: outcomes.openNeedsAttention === 0,
    },
    violations,
  );
  const webhooks = input.webhooks ? tallyDeliveries(input.webhooks) : undefined;
  return { violations, outcomes, reads, ...(webhooks ? { webhooks } : {}), conservation };
}
