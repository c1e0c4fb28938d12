// The rules of a chaos audit beside the ledgers: which failure codes an operation may end
// with (its definitions' business refusals, the codes of fenced steps, cancelled), which
// invariant a step's effect belongs to, what a cancel's answer binds the outcome to, and
// what a tenant's completion webhooks must show for each finished operation.
import { CANCELLED_CODE } from '../../workflows/contracts.js';
import type { OperationRegistry } from '../../workflows/registry.js';
import { outcomeSignature, type OpRecord } from './records.js';
import type { EffectKind } from './vocabulary.js';
import type { WebhookReceiver } from './webhook-receiver.js';

/** Records a violation of `rule` for the operation being audited. */
export type Flag = (rule: string, message: string) => void;

export interface WebhookTally {
  /** Finished operations whose event reached the receiver with a 2xx answer. */
  delivered: number;
  /** POSTs the receiver got, and those beyond the first of each event. */
  posts: number;
  redeliveries: number;
  /** POSTs it refused on purpose (the flaky receiver's 500s). */
  refused: number;
}

/** The codes an operation may fail with: its business refusals, the codes of fenced steps, and cancelled. */
export function failureCodesOf(registry: OperationRegistry): { business: Set<string>; unavailable: Set<string> } {
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
export function ruleOf(kind: EffectKind | undefined): string {
  if (kind?.kind === 'money') return 'I1 money moves at most once';
  if (kind?.kind === 'stock') return 'I2 reservations';
  return 'effects: in force exactly when succeeded';
}

/**
 * What a cancel's answer binds the outcome to. Answered 202, it always ends the operation
 * cancelled, whatever step it met. Answered 409, it found the operation finished and
 * changed nothing. But an earlier attempt of the same cancel that got no answer, or a
 * 5xx, may have reached the engine: then its retry's 409 can be the answer to an
 * operation this very cancel ended, and either outcome is right.
 */
export function checkCancel(
  rec: OpRecord | undefined,
  operation: Record<string, unknown>,
  status: string,
  code: string | undefined,
  v: Flag,
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
export function checkDeliveries(receiver: WebhookReceiver, eventId: string, operation: Record<string, unknown>, v: Flag): void {
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

export function tallyDeliveries(receiver: WebhookReceiver): WebhookTally {
  const ids = new Set(receiver.deliveries.map((d) => d.id));
  const delivered = [...ids].filter((id) => receiver.deliveriesOf(id).some((d) => d.status >= 200 && d.status < 300)).length;
  return {
    delivered,
    posts: receiver.deliveries.length,
    redeliveries: receiver.deliveries.length - ids.size,
    refused: receiver.deliveries.filter((d) => d.status >= 300).length,
  };
}
