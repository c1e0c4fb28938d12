// The atomic claim of an idempotency key. The claim is `workflow.start` with
// REJECT_DUPLICATE: the workflow ID `<tenant>/<key>` is the unique constraint and the
// fingerprint rides in the memo, written atomically with the execution. There is no
// check-then-start anywhere: a duplicate learns it is one from
// WorkflowExecutionAlreadyStartedError, then reads the claim the execution carries.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import type { OperationRef } from '../../../workflows/identity.js';
import { requestDifferences } from '../fingerprint.js';
import type { Claim } from '../start-options.js';
import type { EngineCall } from './deadline.js';

/** The claim an execution's memo records, or undefined when it was not started by this API. */
export function claimFromMemo(memo: Record<string, unknown> | undefined): Claim | undefined {
  if (!memo) return undefined;
  const { type, fingerprint, request, trace } = memo;
  if (typeof type !== 'string' || typeof fingerprint !== 'string') return undefined;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return undefined;
  const claim: Claim = { type, fingerprint, request: request as Record<string, unknown> };
  // The operation's trace, which a retry of the key links to.
  const traceparent = (trace as { traceparent?: unknown } | undefined)?.traceparent;
  return typeof traceparent === 'string' ? { ...claim, trace: { traceparent } } : claim;
}

/** Where a key stands once claimed: started by this claim, or found taken (and by what). */
export interface ClaimOutcome {
  handle: WorkflowHandle;
  started: boolean;
  /** The claim the execution carries: ours when started, its memo's when found taken. */
  claimed: Claim | undefined;
  /** The execution that held the key, when the start found it taken. */
  existing?: WorkflowExecutionDescription;
}

export interface ClaimDeps {
  client: Client;
  call: EngineCall;
  start(ref: OperationRef, claim: Claim): Promise<WorkflowHandle>;
}

/** Starts the workflow, or finds the execution that holds the key and reads its claim. */
export async function claimKey(deps: ClaimDeps, ref: OperationRef, incoming: Claim): Promise<ClaimOutcome> {
  // Twice at most: the execution a duplicate start ran into may have just passed its
  // retention and been deleted, and then the key is free again.
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await deps.call(() => deps.start(ref, incoming));
      return { handle, started: true, claimed: incoming };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    const handle = deps.client.workflow.getHandle(ref.workflowId);
    let existing: WorkflowExecutionDescription;
    try {
      existing = await deps.call(() => handle.describe());
    } catch (err) {
      if (err instanceof WorkflowNotFoundError && attempt === 0) continue;
      throw err;
    }
    return { handle, started: false, claimed: claimFromMemo(existing.memo), existing };
  }
}

/**
 * The names of what differs when `incoming` is not the request that claimed the key, or
 * undefined when it is the same. `bound` reduces a request to the fields the key is bound
 * to. An execution without our memo was not started by this API: the key is taken all the same.
 */
export function claimConflict(
  claimed: Claim | undefined,
  incoming: Claim,
  bound: (request: Record<string, unknown>) => Record<string, unknown> = (r) => r,
): string[] | undefined {
  if (claimed && claimed.type === incoming.type && claimed.fingerprint === incoming.fingerprint) return undefined;
  if (!claimed) return ['type'];
  return requestDifferences(
    { type: claimed.type, request: bound(claimed.request) },
    { type: incoming.type, request: bound(incoming.request) },
  );
}

/**
 * Claims in flight on this instance, by workflow ID: concurrent duplicates (a client's
 * retries racing its first try) share one, so a burst of them costs Temporal one start,
 * not one start and one describe each.
 */
export class SharedClaims<T> {
  private readonly pending = new Map<string, Promise<T>>();

  /** The claim in flight for `workflowId`, or a new one from `make`; `joined` when it was already in flight. */
  join(workflowId: string, make: () => Promise<T>): { claim: Promise<T>; joined: boolean } {
    const current = this.pending.get(workflowId);
    if (current) return { claim: current, joined: true };
    const claim = make();
    this.pending.set(workflowId, claim);
    claim.finally(() => this.pending.delete(workflowId)).catch(() => undefined);
    return { claim, joined: false };
  }
}
