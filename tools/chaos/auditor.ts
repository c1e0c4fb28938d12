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
import type { OperationDefinition, StepDefinition } from '../../workflows/definition.js';
import { completionEventId, downstreamKey, operationRef } from '../../workflows/identity.js';
import { builtInRegistry, type OperationRegistry } from '../../workflows/registry.js';
import { outcomeSignature, stableJson, type OpRecord, type Violation } from './client.js';
import type { PlannedOp } from './plan.js';
import { effectKindOf, isService, itemsOf, moneyOf, type EffectKind, type Service } from './vocabulary.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export interface AuditInput {
  apiUrls: readonly [string, string];
  /** Base URL of each sandbox, by the service name steps use. */
  services: Readonly<Record<Service, string>>;
  /** The definitions the plan was drawn from (the built-in ones unless given). */
  registry?: OperationRegistry;
  /** The Authorization header of each tenant; none in dev mode. */
  authorization?: Readonly<Record<string, string>>;
  ops: PlannedOp[];
  records: Map<string, OpRecord>;
  initialBalances: Record<string, number>;
  initialStock: Record<string, number>;
  /** The receiver of the tenants' completion webhooks, when the run has one. */
  webhooks?: WebhookReceiver;
}

export interface WebhookTally {
  /** Finished operations whose event reached the receiver with a 2xx answer. */
  delivered: number;
  /** POSTs the receiver got, and those beyond the first of each event. */
  posts: number;
  redeliveries: number;
  /** POSTs it refused on purpose (the flaky receiver's 500s). */
  refused: number;
}

export interface AuditOutcomes {
  succeeded: number;
  failed: number;
  /** Still processing with NeedsAttention set (allowed by invariant 3, reported). */
  openNeedsAttention: number;
  /** Still processing without NeedsAttention: a violation of invariant 3. */
  open: number;
  /** Never accepted by the API (every attempt answered 503 or failed on the network). */
  neverStarted: number;
  byCode: Record<string, number>;
  /** Finished operations of each type of the registry. */
  byType: Record<string, { succeeded: number; failed: number }>;
  /** Operations whose resource carries needsAttention: true (terminal or not). */
  needsAttention: number;
}

export interface AuditResult {
  violations: Violation[];
  outcomes: AuditOutcomes;
  /** Ledger and API reads the auditor made. */
  reads: number;
  webhooks?: WebhookTally;
  conservation: {
    /**
     * Per account, from the rows under the operations' keys: charged (taken from it) and
     * credited (given to it), netCharged their difference; succeeded: what the operations
     * the API says succeeded take from it net (a transfer's payee gets its amount back).
     */
    accounts: Array<{
      id: string;
      initial: number;
      final: number;
      charged: number;
      credited: number;
      netCharged: number;
      succeeded: number;
    }>;
    /**
     * All accounts together: how much they fell; what succeeded operations charged out of
     * them (money that went to no account: payments, checkouts); what succeeded operations
     * moved between them (transfers), which changes no total.
     */
    money: { fell: number; chargedOut: number; movedBetweenAccounts: number };
    skus: Array<{
      sku: string;
      initial: number;
      available: number;
      held: number;
      confirmedByOps: number;
      heldByOps: number;
      succeeded: number;
    }>;
  };
}

const CANCELLED_CODE = 'cancelled';

type Read = { status: number; body: Record<string, unknown> };

/** What one step's effect row says: its state, and whether that is the effect in force. */
interface EffectRead {
  step: StepDefinition<never>;
  service: Service;
  url: string;
  kind: EffectKind | undefined;
  state: string;
  inForce: boolean;
  row: Record<string, unknown>;
}

/** The codes an operation may fail with: its business refusals, the codes of fenced steps, and cancelled. */
function failureCodesOf(registry: OperationRegistry): { business: Set<string>; unavailable: Set<string> } {
  const business = new Set<string>();
  const unavailable = new Set<string>();
  for (const definition of registry.all) {
    unavailable.add(definition.unavailableCode);
    for (const step of definition.steps) {
      for (const code of Object.values(step.businessErrors)) business.add(code);
      if (step.unavailableCode) unavailable.add(step.unavailableCode);
    }
  }
  return { business, unavailable };
}

/** The invariant a step's effect belongs to, by what its row holds. */
function ruleOf(kind: EffectKind | undefined): string {
  if (kind?.kind === 'money') return 'I1 money moves at most once';
  if (kind?.kind === 'stock') return 'I2 reservations';
  return 'effects: in force exactly when succeeded';
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
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  };
  const outcomes: AuditOutcomes = {
    succeeded: 0,
    failed: 0,
    openNeedsAttention: 0,
    open: 0,
    neverStarted: 0,
    byCode: {},
    byType: Object.fromEntries(registry.types.map((t) => [t, { succeeded: 0, failed: 0 }])),
    needsAttention: 0,
  };
  const chargedByAccount = new Map<string, number>();
  const creditedByAccount = new Map<string, number>();
  const confirmedBySku = new Map<string, number>();
  const heldBySku = new Map<string, number>();
  const succeededByAccount = new Map<string, number>();
  const succeededBySku = new Map<string, number>();
  const money = { chargedOut: 0, movedBetweenAccounts: 0 };
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);

  /** Every step's effect row under the operation's keys; a row two steps share (a hold and its confirm) is read once. */
  const readEffects = async (
    definition: OperationDefinition,
    workflowId: string,
    v: (rule: string, message: string) => void,
  ): Promise<EffectRead[]> => {
    const byUrl = new Map<string, Promise<Read>>();
    const effects: Array<Promise<EffectRead>> = [];
    for (const step of definition.steps as readonly StepDefinition<never>[]) {
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
    const v = (rule: string, message: string) => violations.push({ rule, key: op.key, message });
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
        if (e.state !== 'none' && e.state !== 'fenced' && stableJson(e.row.items) !== stableJson(items)) {
          v(
            'I2 reservations',
            `${e.step.name}: the reservation holds ${stableJson(e.row.items)}; the request was ${stableJson(items)}`,
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
      (outcomes.byType[op.type] ??= { succeeded: 0, failed: 0 }).succeeded++;
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
      if (op.profile === 'doomed') v('plan: designed to fail', `succeeded although ${stableJson(op.body)} cannot`);
    } else if (status === 'failed') {
      outcomes.failed++;
      (outcomes.byType[op.type] ??= { succeeded: 0, failed: 0 }).failed++;
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

  // Global conservation: every change of a balance or a stock is explained by the
  // operations' own keys (a charge under any other key would show up here).
  // An operation still compensating (NeedsAttention) may hold money its outcome will return.
  const settled = outcomes.openNeedsAttention === 0;
  const accounts: AuditResult['conservation']['accounts'] = [];
  for (const [id, initial] of Object.entries(input.initialBalances)) {
    const res = await read(`${input.services.bank}/accounts/${encodeURIComponent(id)}`);
    const final = Number(res.body.balance);
    const charged = chargedByAccount.get(id) ?? 0;
    const credited = creditedByAccount.get(id) ?? 0;
    const netCharged = charged - credited;
    const succeeded = succeededByAccount.get(id) ?? 0;
    accounts.push({ id, initial, final, charged, credited, netCharged, succeeded });
    if (initial - final !== netCharged || (netCharged !== succeeded && settled)) {
      violations.push({
        rule: 'conservation of money',
        message:
          `${id}: balance fell by ${initial - final}; the operations' keys hold ${charged} charged and ${credited} credited, ` +
          `${netCharged} net; succeeded operations account for ${succeeded}` +
          (initial - final > succeeded ? ` (${initial - final - succeeded} charged that no succeeded operation explains)` : ''),
      });
    }
  }
  const fell = accounts.reduce((sum, a) => sum + a.initial - a.final, 0);
  if (fell !== money.chargedOut && settled) {
    violations.push({
      rule: 'conservation of money',
      message:
        `all accounts together fell by ${fell}; succeeded operations charged ${money.chargedOut} out of them ` +
        `(and moved ${money.movedBetweenAccounts} between them, which changes no total)`,
    });
  }
  const skus: AuditResult['conservation']['skus'] = [];
  for (const [sku, initial] of Object.entries(input.initialStock)) {
    const res = await read(`${input.services.reservations}/inventory/${encodeURIComponent(sku)}`);
    const available = Number(res.body.available);
    const held = Number(res.body.held);
    const confirmedByOps = confirmedBySku.get(sku) ?? 0;
    const heldByOps = heldBySku.get(sku) ?? 0;
    const succeeded = succeededBySku.get(sku) ?? 0;
    skus.push({ sku, initial, available, held, confirmedByOps, heldByOps, succeeded });
    if (initial - available !== confirmedByOps + heldByOps || (confirmedByOps !== succeeded && settled)) {
      violations.push({
        rule: 'conservation of stock',
        message:
          `${sku}: available fell by ${initial - available}; confirmed ${confirmedByOps} + held ${heldByOps} ` +
          `by the operations' keys; succeeded operations account for ${succeeded}`,
      });
    }
    if (held !== heldByOps)
      violations.push({ rule: 'conservation of stock', message: `${sku}: ${held} held, the operations' keys hold ${heldByOps}` });
    if (held > 0 && settled) {
      violations.push({
        rule: 'I2 reservations',
        message: `${sku}: ${held} still held at the end, with every operation finished`,
      });
    }
  }
  const webhooks = input.webhooks ? tallyDeliveries(input.webhooks) : undefined;
  return {
    violations,
    outcomes,
    reads,
    ...(webhooks ? { webhooks } : {}),
    conservation: { accounts, money: { fell, ...money }, skus },
  };
}

/**
 * What a cancel's answer binds the outcome to. Answered 202, it always ends the operation
 * cancelled, whatever step it met. Answered 409, it found the operation finished and
 * changed nothing. But an earlier attempt of the same cancel that got no answer, or a
 * 5xx, may have reached the engine: then its retry's 409 can be the answer to an
 * operation this very cancel ended, and either outcome is right.
 */
function checkCancel(
  rec: OpRecord | undefined,
  operation: Record<string, unknown>,
  status: string,
  code: string | undefined,
  v: (rule: string, message: string) => void,
): void {
  const cancelAccepted = rec?.cancel?.status === 202;
  const cancelMayHaveTaken = rec?.cancel?.status === 'network' || (rec?.cancel?.unanswered ?? 0) > 0;
  const endedCancelled = code === CANCELLED_CODE;
  if (cancelAccepted && operation.cancelRequested !== true)
    v('API: a cancel shows in the resource', 'a cancel was answered 202, but the resource says cancelRequested false');
  if (cancelAccepted && !endedCancelled) {
    const at = rec.cancel!.step ? ` at step ${rec.cancel!.step}` : ' before the first step';
    v(
      'API: a cancel answered 202 ends cancelled',
      `a cancel was answered 202${at}, yet the operation ${status === 'succeeded' ? 'succeeded' : `failed with ${code}`}`,
    );
  }
  if (endedCancelled && operation.cancelRequested !== true)
    v('API: a cancel shows in the resource', 'ended cancelled, but the resource says cancelRequested false');
  if (endedCancelled && !cancelAccepted && !cancelMayHaveTaken)
    v(
      'API: only a cancel cancels',
      `ended cancelled, but its only cancel was answered ${String(rec?.cancel?.status ?? 'never sent')}`,
    );
  if (rec?.cancel?.status === 409 && endedCancelled && !cancelMayHaveTaken)
    v('API: a finished operation is not changed by a cancel', 'a cancel was answered 409, yet the operation ended cancelled');
}

/**
 * The completion event of one finished operation: delivered with a 2xx at least once, every
 * POST signed validly, one body for all of them, and that body the outcome the API reports.
 */
function checkDeliveries(
  receiver: WebhookReceiver,
  eventId: string,
  operation: Record<string, unknown>,
  v: (rule: string, message: string) => void,
): void {
  const deliveries = receiver.deliveriesOf(eventId);
  if (!deliveries.some((d) => d.status >= 200 && d.status < 300)) {
    v('webhooks: delivered at least once', `finished ${String(operation.status)}, ${deliveries.length} POSTs, none answered 2xx`);
    return;
  }
  const unsigned = deliveries.filter((d) => !d.verified).length;
  if (unsigned > 0) v('webhooks: every delivery is signed', `${unsigned} of ${deliveries.length} POSTs failed verification`);
  if (new Set(deliveries.map((d) => d.body)).size !== 1)
    v('webhooks: a redelivery carries the same body', `${deliveries.length} POSTs carried different bodies`);
  const event = deliveries[0]!.event;
  const expectedType = operation.status === 'succeeded' ? 'operation.succeeded' : 'operation.failed';
  if (event?.type !== expectedType || !event.data || outcomeSignature(event.data) !== outcomeSignature(operation)) {
    v(
      'webhooks: the event is the outcome',
      `event ${String(event?.type)} ${event?.data ? outcomeSignature(event.data) : 'without data'}; the API says ${outcomeSignature(operation)}`,
    );
  }
}

function tallyDeliveries(receiver: WebhookReceiver): WebhookTally {
  const ids = new Set(receiver.deliveries.map((d) => d.id));
  const delivered = [...ids].filter((id) => receiver.deliveriesOf(id).some((d) => d.status >= 200 && d.status < 300)).length;
  return {
    delivered,
    posts: receiver.deliveries.length,
    redeliveries: receiver.deliveries.length - ids.size,
    refused: receiver.deliveries.filter((d) => d.status >= 300).length,
  };
}
