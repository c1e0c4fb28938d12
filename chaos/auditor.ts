// The auditor of a chaos run: after every operation settled it reads what actually
// happened (the bank's and the reservation service's ledgers) and what the API says
// happened (through BOTH instances), and checks the five invariants per operation (I1 money
// moves at most once, I2 no hold left by a failed operation and none confirmed without a
// charge, I3 every operation ends or is marked NeedsAttention, I4 every retry sees the same
// outcome, I5 nothing accepted is lost), then the global conservation of money and stock.
// A cancelled operation is held to the same ledgers (no money moved, no hold kept), and a
// cancel the API accepted must show in the resource. When the tenant has a completion
// webhook, every finished operation must have reached the receiver at least once with a
// valid signature, the same body on every redelivery, and that body must be the outcome.
// It trusts no client record it can check on a ledger.
import { outcomeSignature, stableJson, type OpRecord, type Violation } from './client.js';
import type { PlannedOp } from './plan.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export const TENANT = 'default';

export interface AuditInput {
  apiUrls: readonly [string, string];
  bankUrl: string;
  reservationsUrl: string;
  ops: PlannedOp[];
  records: Map<string, OpRecord>;
  initialBalances: Record<string, number>;
  initialStock: Record<string, number>;
  /** The receiver of the tenant's completion webhooks, when the run has one. */
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
    /** netCharged: under the operations' keys on the bank's ledger; succeeded: what the API says succeeded. */
    accounts: Array<{ id: string; initial: number; final: number; netCharged: number; succeeded: number }>;
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

const BUSINESS_CODES = new Set([
  'insufficient_funds',
  'account_not_found',
  'currency_mismatch',
  'out_of_stock',
  'unknown_sku',
  'reservation_expired',
]);
const UNAVAILABLE_CODES = new Set(['payment_unavailable', 'inventory_unavailable']);
const CANCELLED_CODE = 'cancelled';

type Read = { status: number; body: Record<string, unknown> };

export async function audit(input: AuditInput): Promise<AuditResult> {
  const violations: Violation[] = [];
  let reads = 0;
  const read = async (url: string): Promise<Read> => {
    for (let attempt = 1; ; attempt++) {
      reads++;
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
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
    needsAttention: 0,
  };
  const netByAccount = new Map<string, number>();
  const confirmedBySku = new Map<string, number>();
  const heldBySku = new Map<string, number>();
  const succeededByAccount = new Map<string, number>();
  const succeededBySku = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);

  const auditOne = async (op: PlannedOp): Promise<void> => {
    const rec = input.records.get(op.key);
    const v = (rule: string, message: string) => violations.push({ rule, key: op.key, message });
    const workflowId = `${TENANT}/${op.key}`;
    const path = `/v1/operations/${encodeURIComponent(op.key)}`;
    const [a0, a1, charge, hold] = await Promise.all([
      read(input.apiUrls[0] + path),
      read(input.apiUrls[1] + path),
      read(`${input.bankUrl}/charges/${encodeURIComponent(`${workflowId}/charge`)}`),
      op.type === 'checkout'
        ? read(`${input.reservationsUrl}/reservations/${encodeURIComponent(`${workflowId}/reserve`)}`)
        : Promise.resolve<Read>({ status: 404, body: {} }),
    ]);

    // What the bank holds under this operation's key, whatever the API says.
    const chargeStatus = charge.status === 200 ? String(charge.body.status) : 'none';
    const netCharged = chargeStatus === 'captured' ? Number(charge.body.amount) : 0;
    if (chargeStatus === 'captured') add(netByAccount, String(charge.body.account), netCharged);
    if (
      (chargeStatus === 'captured' || chargeStatus === 'reversed') &&
      (charge.body.amount !== op.body.amount || charge.body.account !== op.body.account)
    ) {
      v(
        'I1 money moves at most once',
        `the bank charged ${String(charge.body.amount)} to ${String(charge.body.account)}; the request was ${op.body.amount} to ${op.body.account}`,
      );
    }
    const holdStatus = hold.status === 200 ? String(hold.body.status) : 'none';
    const quantities = (op.body.items ?? []).map((i) => [i.sku, i.quantity] as const);
    if (holdStatus === 'confirmed') for (const [sku, q] of quantities) add(confirmedBySku, sku, q);
    if (holdStatus === 'held') for (const [sku, q] of quantities) add(heldBySku, sku, q);
    // A fence (a release that arrived first) is a tombstone without items.
    if (holdStatus !== 'none' && holdStatus !== 'fenced' && stableJson(hold.body.items) !== stableJson(op.body.items)) {
      v('I2 reservations', `the reservation holds ${stableJson(hold.body.items)}; the request was ${stableJson(op.body.items)}`);
    }
    if (holdStatus === 'confirmed' && netCharged === 0) v('I2 reservations', 'reservation confirmed without a charge');

    if (a0.status === 404 && a1.status === 404) {
      if (rec?.accepted) v('I5 nothing lost', 'the API accepted it (200/202) and no instance can find it now');
      else outcomes.neverStarted++;
      if (netCharged !== 0) v('I1 money moves at most once', `never started, yet ${netCharged} is charged under its key`);
      if (holdStatus === 'held' || holdStatus === 'confirmed')
        v('I2 reservations', `never started, yet its reservation is ${holdStatus}`);
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
    for (const seen of rec?.outcomes ?? []) {
      if (seen.signature !== sig0)
        v('I4 same outcome through any instance', `a client saw ${seen.signature} (${seen.via}); now ${sig0}`);
    }
    if (rec?.timedOut)
      v('I4 same outcome through any instance', 'finished, but its clients could not learn the outcome before the bound');

    const result = (operation.result ?? {}) as Record<string, unknown>;
    const error = (operation.error ?? {}) as Record<string, unknown>;
    const cancelAccepted = rec?.cancel?.status === 202;
    // An attempt that got no answer or a 5xx may have taken: then a retry's 409 is the
    // answer to an operation that this cancel ended, as the contract says for a finished one.
    const cancelMayHaveTaken = rec?.cancel?.status === 'network' || (rec?.cancel?.unanswered ?? 0) > 0;
    if (cancelAccepted && operation.cancelRequested !== true)
      v('API: a cancel shows in the resource', 'a cancel was answered 202, but the resource says cancelRequested false');
    if (error.code === CANCELLED_CODE && operation.cancelRequested !== true)
      v('API: a cancel shows in the resource', 'ended cancelled, but the resource says cancelRequested false');
    if (error.code === CANCELLED_CODE && !cancelAccepted && !cancelMayHaveTaken)
      v(
        'API: only a cancel cancels',
        `ended cancelled, but its only cancel was answered ${String(rec?.cancel?.status ?? 'never sent')}`,
      );
    if (rec?.cancel?.status === 409 && error.code === CANCELLED_CODE && !cancelMayHaveTaken)
      v('API: a finished operation is not changed by a cancel', 'a cancel was answered 409, yet the operation ended cancelled');
    if (input.webhooks) checkDeliveries(input.webhooks, workflowId, operation, v);
    if (status === 'succeeded') {
      outcomes.succeeded++;
      add(succeededByAccount, op.body.account, op.body.amount);
      for (const [sku, q] of quantities) add(succeededBySku, sku, q);
      if (netCharged !== op.body.amount)
        v(
          'I1 money moves at most once',
          `succeeded, but net charged ${netCharged} (bank: ${chargeStatus}), expected ${op.body.amount}`,
        );
      if (chargeStatus === 'captured' && result.chargeId !== charge.body.chargeId) {
        v(
          'I1 money moves at most once',
          `result.chargeId ${String(result.chargeId)} is not the bank's ${String(charge.body.chargeId)}`,
        );
      }
      if (op.type === 'checkout') {
        if (holdStatus !== 'confirmed') v('I2 reservations', `succeeded, but its reservation is ${holdStatus}`);
        else if (result.reservationId !== hold.body.reservationId) {
          v(
            'I2 reservations',
            `result.reservationId ${String(result.reservationId)} is not the ledger's ${String(hold.body.reservationId)}`,
          );
        }
      }
      if (op.profile === 'doomed')
        v('plan: designed to fail', `succeeded although ${op.body.account} / ${stableJson(op.body.items ?? [])} cannot`);
    } else if (status === 'failed') {
      outcomes.failed++;
      const code = String(error.code);
      outcomes.byCode[code] = (outcomes.byCode[code] ?? 0) + 1;
      if (netCharged !== 0) v('I1 money moves at most once', `failed (${code}), but net charged ${netCharged}`);
      if (holdStatus === 'held') v('I2 reservations', `failed (${code}), but its reservation is still held`);
      if (holdStatus === 'confirmed') v('I2 reservations', `failed (${code}), but its reservation is confirmed`);
      if (!BUSINESS_CODES.has(code) && !UNAVAILABLE_CODES.has(code) && code !== CANCELLED_CODE)
        v('API: stable error codes', `failed with unexpected code ${code}`);
      if (op.profile === 'normal' && BUSINESS_CODES.has(code))
        v('plan: designed to succeed', `failed with ${code} although its account and stock are ample`);
      // A cancel may stop a doomed operation before the step that would have refused it.
      if (op.expectedFailure && !op.expectedFailure.includes(code) && code !== CANCELLED_CODE)
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
  const accounts: AuditResult['conservation']['accounts'] = [];
  for (const [id, initial] of Object.entries(input.initialBalances)) {
    const res = await read(`${input.bankUrl}/accounts/${encodeURIComponent(id)}`);
    const final = Number(res.body.balance);
    const netCharged = netByAccount.get(id) ?? 0;
    const succeeded = succeededByAccount.get(id) ?? 0;
    accounts.push({ id, initial, final, netCharged, succeeded });
    // An operation still compensating (NeedsAttention) may hold money its outcome will return.
    if (initial - final !== netCharged || (netCharged !== succeeded && outcomes.openNeedsAttention === 0)) {
      violations.push({
        rule: 'conservation of money',
        message:
          `${id}: balance fell by ${initial - final}; the operations' keys hold ${netCharged} net; ` +
          `succeeded operations account for ${succeeded}` +
          (initial - final > succeeded ? ` (${initial - final - succeeded} charged that no succeeded operation explains)` : ''),
      });
    }
  }
  const skus: AuditResult['conservation']['skus'] = [];
  for (const [sku, initial] of Object.entries(input.initialStock)) {
    const res = await read(`${input.reservationsUrl}/inventory/${encodeURIComponent(sku)}`);
    const available = Number(res.body.available);
    const held = Number(res.body.held);
    const confirmedByOps = confirmedBySku.get(sku) ?? 0;
    const heldByOps = heldBySku.get(sku) ?? 0;
    const succeeded = succeededBySku.get(sku) ?? 0;
    skus.push({ sku, initial, available, held, confirmedByOps, heldByOps, succeeded });
    if (
      initial - available !== confirmedByOps + heldByOps ||
      (confirmedByOps !== succeeded && outcomes.openNeedsAttention === 0)
    ) {
      violations.push({
        rule: 'conservation of stock',
        message:
          `${sku}: available fell by ${initial - available}; confirmed ${confirmedByOps} + held ${heldByOps} ` +
          `by the operations' keys; succeeded checkouts account for ${succeeded}`,
      });
    }
    if (held !== heldByOps)
      violations.push({ rule: 'conservation of stock', message: `${sku}: ${held} held, the operations' keys hold ${heldByOps}` });
    if (held > 0 && outcomes.openNeedsAttention === 0) {
      violations.push({
        rule: 'I2 reservations',
        message: `${sku}: ${held} still held at the end, with every operation finished`,
      });
    }
  }
  const webhooks = input.webhooks ? tallyDeliveries(input.webhooks) : undefined;
  return { violations, outcomes, reads, ...(webhooks ? { webhooks } : {}), conservation: { accounts, skus } };
}

/**
 * The completion event of one finished operation: delivered with a 2xx at least once, every
 * POST signed validly, one body for all of them, and that body the outcome the API reports.
 */
function checkDeliveries(
  receiver: WebhookReceiver,
  workflowId: string,
  operation: Record<string, unknown>,
  v: (rule: string, message: string) => void,
): void {
  const deliveries = receiver.deliveriesOf(`${workflowId}/completed`);
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
