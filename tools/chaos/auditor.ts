// The auditor of a chaos run: after every operation settled it reads what actually happened
// (the bank's and the reservation service's ledgers) and what the API says happened (through
// BOTH instances, as the operation's tenant), and checks the five invariants per operation
// (I1 money moves at most once, I2 no hold left by a failed operation and none confirmed
// without a charge, I3 every operation ends or is marked NeedsAttention, I4 every retry sees
// the same outcome, I5 nothing accepted is lost), then the global conservation of money and
// stock (audit-conservation.ts).
//
// Each operation is read through its definition: every step's `effect` names the ledger row
// under the step's key and the states in which its effect is in force. A succeeded operation
// has every step's effect in force, a failed one none (a cancelled one included). The
// sandboxes' vocabulary says how a row reads: a charge takes money from an account, a credit
// gives it to one, a reservation holds or keeps items. A cancel the API answered 202 must end
// the operation cancelled. When the tenants have a completion webhook, every finished
// operation must have reached the receiver at least once with a valid signature, the same
// body on every redelivery, and that body must be the outcome. It trusts no client record it
// can check on a ledger.
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '../../common/http/fingerprint.js';
import { CANCELLED_CODE } from '../../workflows/contracts.js';
import type { OperationDefinition, StepDefinition } from '../../workflows/definition.js';
import { completionEventId, downstreamKey, operationRef } from '../../workflows/identity.js';
import { builtInCatalog, type DefinitionCatalog } from '../../workflows/catalog.js';
import { checkConservation, LedgerTally, type Conservation, type InitialLedgers } from './audit-conservation.js';
import type { PlannedOp } from './plan.js';
import { outcomeSignature, type OpRecord, type Violation } from './records.js';
import { effectKindOf, isService, itemsOf, moneyOf, type EffectKind, type Service } from './vocabulary.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export interface AuditInput extends InitialLedgers {
  apiUrls: readonly [string, string];
  /** Base URL of each sandbox, by the service name steps use. */
  services: Readonly<Record<Service, string>>;
  /** The definitions the plan was drawn from (the built-in ones unless given). */
  catalog?: DefinitionCatalog;
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

export interface AuditOutcomes extends FinishedCounts {
  /** Still processing: with NeedsAttention set (allowed by invariant 3), and without (a violation). */
  openNeedsAttention: number;
  open: number;
  /** Never accepted by the API (every attempt answered 503 or failed on the network). */
  neverStarted: number;
  byCode: Record<string, number>;
  /** Finished operations of each type of the catalog. */
  byType: Record<string, FinishedCounts>;
  /** Operations whose resource carries needsAttention: true (terminal or not). */
  needsAttention: number;
}

export interface WebhookTally {
  /** Finished operations whose event reached the receiver with a 2xx answer; POSTs, those beyond an event's first, and those refused on purpose. */
  delivered: number;
  posts: number;
  redeliveries: number;
  refused: number;
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
/** Records a violation of `rule` for the operation being audited. */
type Flag = (rule: string, message: string) => void;

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

/** The invariant a step's effect belongs to, by what its row holds. */
function ruleOf(kind: EffectKind | undefined): string {
  if (kind?.kind === 'money') return 'I1 money moves at most once';
  if (kind?.kind === 'stock') return 'I2 reservations';
  return 'effects: in force exactly when succeeded';
}

/**
 * What a cancel's answer binds the outcome to. Answered 202, it always ends the operation
 * cancelled, whatever step it met. Answered 409, it found the operation finished and changed
 * nothing. But an earlier attempt of the same cancel that got no answer, or a 5xx, may have
 * reached the engine: then its retry's 409 can be the answer to an operation this very cancel
 * ended, and either outcome is right.
 */
function checkCancel(rec: OpRecord | undefined, operation: Record<string, unknown>, code: string | undefined, v: Flag): void {
  const accepted = rec?.cancel?.status === 202;
  const mayHaveTaken = rec?.cancel?.status === 'network' || (rec?.cancel?.unanswered ?? 0) > 0;
  const cancelled = code === CANCELLED_CODE;
  const shown = operation.cancelRequested === true;
  if (accepted && !shown)
    v('API: a cancel shows in the resource', 'a cancel was answered 202, but the resource says cancelRequested false');
  if (accepted && !cancelled) {
    const at = rec.cancel!.step ? ` at step ${rec.cancel!.step}` : ' before the first step';
    const outcome = operation.status === 'succeeded' ? 'succeeded' : `failed with ${code}`;
    v('API: a cancel answered 202 ends cancelled', `a cancel was answered 202${at}, yet the operation ${outcome}`);
  }
  if (cancelled && !shown)
    v('API: a cancel shows in the resource', 'ended cancelled, but the resource says cancelRequested false');
  if (cancelled && !accepted && !mayHaveTaken)
    v(
      'API: only a cancel cancels',
      `ended cancelled, but its only cancel was answered ${String(rec?.cancel?.status ?? 'never sent')}`,
    );
  if (rec?.cancel?.status === 409 && cancelled && !mayHaveTaken)
    v('API: a finished operation is not changed by a cancel', 'a cancel was answered 409, yet the operation ended cancelled');
}

/** The completion event of one finished operation: delivered with a 2xx at least once, every POST signed, one body, the outcome. */
function checkDeliveries(receiver: WebhookReceiver, eventId: string, operation: Record<string, unknown>, v: Flag): void {
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
    const seen = `event ${String(event?.type)} ${event?.data ? outcomeSignature(event.data) : 'without data'}`;
    v('webhooks: the event is the outcome', `${seen}; the API says ${outcomeSignature(operation)}`);
  }
}

function tallyDeliveries(receiver: WebhookReceiver): WebhookTally {
  const ids = new Set(receiver.deliveries.map((d) => d.id));
  const delivered = [...ids].filter((id) => receiver.deliveriesOf(id).some((d) => d.status >= 200 && d.status < 300)).length;
  const posts = receiver.deliveries.length;
  return { delivered, posts, redeliveries: posts - ids.size, refused: receiver.deliveries.filter((d) => d.status >= 300).length };
}

/** One audit: its reads (counted, retried on a 5xx or a network error), its tallies and its findings. */
class Audit {
  readonly violations: Violation[] = [];
  reads = 0;
  readonly tally = new LedgerTally();
  readonly outcomes: AuditOutcomes;
  private readonly business = new Set<string>();
  private readonly unavailable = new Set<string>();

  constructor(
    private readonly input: AuditInput,
    private readonly catalog: DefinitionCatalog,
  ) {
    const byType = Object.fromEntries(catalog.types.map((t) => [t, { succeeded: 0, failed: 0 }]));
    this.outcomes = {
      succeeded: 0,
      failed: 0,
      openNeedsAttention: 0,
      open: 0,
      neverStarted: 0,
      byCode: {},
      byType,
      needsAttention: 0,
    };
    // The codes an operation may fail with: its business refusals, the codes of fenced steps, and cancelled.
    for (const definition of catalog.all) {
      this.unavailable.add(definition.unavailableCode);
      for (const step of definition.steps) {
        for (const code of Object.values(step.businessErrors)) this.business.add(code);
        if (step.unavailableCode) this.unavailable.add(step.unavailableCode);
      }
    }
  }

  read = async (url: string, headers: Record<string, string> = {}): Promise<Read> => {
    for (let attempt = 1; ; attempt++) {
      this.reads++;
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

  /** Every step's effect row under the operation's keys; a row two steps share (a hold and its confirm) is read once. */
  async readEffects(definition: OperationDefinition, workflowId: string, v: Flag): Promise<EffectRead[]> {
    const byUrl = new Map<string, Promise<Read>>();
    const effects: Array<Promise<EffectRead>> = [];
    for (const step of definition.steps) {
      const { effect, service } = step;
      if (!effect) continue;
      if (!isService(service)) {
        v('effects: every step is audited', `${step.name} speaks to ${service}, which the chaos stack does not run`);
        continue;
      }
      const url =
        this.input.services[service] +
        effect.path.replace('{key}', encodeURIComponent(downstreamKey(workflowId, step.keySuffix)));
      if (!byUrl.has(url)) byUrl.set(url, this.read(url));
      effects.push(
        byUrl.get(url)!.then((res) => {
          const state = res.status === 200 ? String(res.body.status) : 'none';
          const kind = effectKindOf(service, effect.path);
          return {
            step,
            service,
            url,
            kind,
            state,
            inForce: effect.present.includes(state),
            row: res.status === 200 ? res.body : {},
          };
        }),
      );
    }
    return Promise.all(effects);
  }

  /** What the ledgers hold under this operation's keys, whatever the API says: each row once, against the request. */
  tallyRows(op: PlannedOp, effects: EffectRead[], v: Flag): void {
    const request = moneyOf(op.body);
    const items = itemsOf(op.body);
    const { tally } = this;
    for (const e of effects.filter((x, i) => effects.findIndex((y) => y.url === x.url) === i)) {
      if (e.kind?.kind === 'money') {
        const [account, amount, out] = [String(e.row.account), Number(e.row.amount), e.kind.direction === 'out'];
        if (e.inForce) tally.add(out ? tally.chargedByAccount : tally.creditedByAccount, account, amount);
        const expected = out ? request.payers : request.payees;
        if ((e.inForce || e.state === 'reversed') && (amount !== request.amount || !expected.includes(account)))
          v(
            'I1 money moves at most once',
            `${e.step.name}: the ${e.service} moved ${String(e.row.amount)} ${out ? 'from' : 'to'} ${account}; ` +
              `the request was ${request.amount} ${out ? 'from' : 'to'} ${expected.join(', ') || 'no account'}`,
          );
      } else if (e.kind?.kind === 'stock') {
        if (e.state === 'confirmed') for (const i of items) tally.add(tally.confirmedBySku, i.sku, i.quantity);
        if (e.state === 'held') for (const i of items) tally.add(tally.heldBySku, i.sku, i.quantity);
        // A fence (a release that arrived first) is a tombstone without items.
        if (e.state !== 'none' && e.state !== 'fenced' && canonicalJson(e.row.items ?? null) !== canonicalJson(items))
          v(
            'I2 reservations',
            `${e.step.name}: the reservation holds ${canonicalJson(e.row.items ?? null)}; the request was ${canonicalJson(items)}`,
          );
      }
    }
  }

  /** A finished operation against its ledgers: every effect in force when it succeeded (its result's ids on the rows), none when it failed. */
  checkFinished(op: PlannedOp, operation: Record<string, unknown>, effects: EffectRead[], v: Flag): void {
    const { outcomes, tally } = this;
    const status = String(operation.status);
    const request = moneyOf(op.body);
    if (status === 'succeeded') {
      outcomes.succeeded++;
      (outcomes.byType[op.type] ??= { succeeded: 0, failed: 0 }).succeeded++;
      for (const payer of request.payers) tally.add(tally.succeededByAccount, payer, request.amount);
      for (const payee of request.payees) tally.add(tally.succeededByAccount, payee, -request.amount);
      tally.money.chargedOut += request.amount * (request.payers.length - request.payees.length);
      tally.money.movedBetweenAccounts += request.amount * request.payees.length;
      for (const i of itemsOf(op.body)) tally.add(tally.succeededBySku, i.sku, i.quantity);
      const result = (operation.result ?? {}) as Record<string, unknown>;
      for (const e of effects) {
        if (!e.inForce) v(ruleOf(e.kind), `succeeded, but ${e.step.name} is ${e.state} at the ${e.service}`);
        // The result names the rows the steps made: its ids are on them.
        for (const field of e.inForce ? Object.keys(e.step.result ?? {}) : [])
          if (!Object.values(e.row).includes(result[field]))
            v(ruleOf(e.kind), `result.${field} ${String(result[field])} is not on the ${e.service}'s row of ${e.step.name}`);
      }
      if (op.profile === 'doomed') v('plan: designed to fail', `succeeded although ${canonicalJson(op.body)} cannot`);
      return;
    }
    if (status !== 'failed') return v('API: operation resource', `unknown status ${status}`);
    const code = String((operation.error as { code?: unknown } | undefined)?.code);
    outcomes.failed++;
    (outcomes.byType[op.type] ??= { succeeded: 0, failed: 0 }).failed++;
    outcomes.byCode[code] = (outcomes.byCode[code] ?? 0) + 1;
    for (const e of effects) if (e.inForce) v(ruleOf(e.kind), `failed (${code}), but ${e.step.name} is ${e.state}`);
    if (!this.business.has(code) && !this.unavailable.has(code) && code !== CANCELLED_CODE)
      v('API: stable error codes', `failed with unexpected code ${code}`);
    if (op.profile === 'normal' && this.business.has(code))
      v('plan: designed to succeed', `failed with ${code} although its accounts and stock are ample`);
    // A cancel may stop a doomed operation before the step that would have refused it.
    if (op.expectedFailure && !op.expectedFailure.includes(code) && code !== CANCELLED_CODE)
      v('plan: designed to fail', `failed with ${code}, expected one of ${op.expectedFailure.join(', ')}`);
  }

  async one(op: PlannedOp): Promise<void> {
    const rec = this.input.records.get(op.key);
    const v: Flag = (rule, message) => this.violations.push({ rule, key: op.key, message });
    const definition = this.catalog.get(op.type);
    if (!definition) return v('plan: a definition per operation', `no definition of ${op.type} in the catalog`);
    const ref = operationRef(op.tenant, op.key);
    const path = `/v1/operations/${encodeURIComponent(op.key)}`;
    const auth = this.input.authorization?.[op.tenant];
    const headers: Record<string, string> = auth ? { authorization: auth } : {};
    const [a0, a1, effects] = await Promise.all([
      this.read(this.input.apiUrls[0] + path, headers),
      this.read(this.input.apiUrls[1] + path, headers),
      this.readEffects(definition, ref.workflowId, v),
    ]);
    this.tallyRows(op, effects, v);
    if (a0.status === 404 && a1.status === 404) {
      if (rec?.accepted) v('I5 nothing lost', 'the API accepted it (200/202) and no instance can find it now');
      else this.outcomes.neverStarted++;
      for (const e of effects) if (e.inForce) v(ruleOf(e.kind), `never started, yet ${e.step.name} is ${e.state}`);
      return;
    }
    if (a0.status !== 200 || a1.status !== 200)
      return v('I4 same outcome through any instance', `GET answered ${a0.status} on api-0 and ${a1.status} on api-1`);
    const operation = a0.body;
    const [sig0, sig1] = [outcomeSignature(a0.body), outcomeSignature(a1.body)];
    if (sig0 !== sig1) v('I4 same outcome through any instance', `api-0 says ${sig0}, api-1 says ${sig1}`);
    if (operation.needsAttention === true) this.outcomes.needsAttention++;
    if (operation.status === 'processing') {
      if (operation.needsAttention === true) this.outcomes.openNeedsAttention++;
      else {
        this.outcomes.open++;
        v(
          'I3 every operation ends',
          `still processing at step ${String(operation.step)} after the bound, without NeedsAttention`,
        );
      }
      return;
    }
    for (const seen of rec?.outcomes ?? [])
      if (seen.signature !== sig0)
        v('I4 same outcome through any instance', `a client saw ${seen.signature} (${seen.via}); now ${sig0}`);
    if (rec?.timedOut)
      v('I4 same outcome through any instance', 'finished, but its clients could not learn the outcome before the bound');
    const code = operation.status === 'failed' ? String((operation.error as { code?: unknown } | undefined)?.code) : undefined;
    checkCancel(rec, operation, code, v);
    if (this.input.webhooks) checkDeliveries(this.input.webhooks, completionEventId(ref), operation, v);
    this.checkFinished(op, operation, effects, v);
  }
}

export async function audit(input: AuditInput): Promise<AuditResult> {
  const a = new Audit(input, input.catalog ?? builtInCatalog);
  const queue = [...input.ops];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let op = queue.shift(); op; op = queue.shift()) await a.one(op);
    }),
  );
  const conservation = await checkConservation(
    a.tally,
    {
      ...{ bankUrl: input.services.bank, reservationsUrl: input.services.reservations, initialBalances: input.initialBalances },
      ...{ initialStock: input.initialStock, read: a.read, settled: a.outcomes.openNeedsAttention === 0 },
    },
    a.violations,
  );
  const webhooks = input.webhooks ? tallyDeliveries(input.webhooks) : undefined;
  return { violations: a.violations, outcomes: a.outcomes, reads: a.reads, ...(webhooks ? { webhooks } : {}), conservation };
}
