// The identity grammar of an operation, in one place. A client's idempotency key is
// scoped by its tenant into the workflow ID (`<tenant>/<key>`), and every downstream key
// is derived from that ID and a step (`<tenant>/<key>/charge`). Everything that needs one
// of these strings gets it from here, composed once and handed along; only readers of a
// string that arrives from outside (a visibility row, a sandbox log line) parse it back.
//
// Pure and deterministic: imported by workflows as well as by the API, the activities and
// the sandboxes.
/** Who asked and under which key: the one value a workflow, its steps and the API share. */
export interface OperationRef {
  tenant: string;
  key: string;
  /** `<tenant>/<key>`; Temporal's unique constraint for the operation. */
  workflowId: string;
}

/**
 * What a request field that names something may hold (an account, a SKU, the bank's account
 * ids): a letter or digit, then up to 127 letters, digits, `.`, `_`, `:` or `-`. No space,
 * no `/`, no markup and no control character, so an identifier can be logged, shown in a
 * console or put in a path as it is. A JSON Schema pattern (ECMA-262), shared with the
 * sandboxes.
 */
export const IDENTIFIER_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
/** IDENTIFIER_PATTERN in words, for a refused field. */
export const IDENTIFIER_RULE = 'must start with a letter or digit and hold only letters, digits, ".", "_", ":" or "-"';

/** What a tenant may be called: never a `/` (the first `/` of an ID ends the tenant) nor a `:`. */
export const TENANT_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Tenants never contain `/` (they match TENANT_PATTERN), so the first `/` splits an ID. */
export function operationRef(tenant: string, key: string): OperationRef {
  return { tenant, key, workflowId: `${tenant}/${key}` };
}

/**
 * The ref behind a workflow ID read from outside (a visibility row, a history), or
 * undefined when the ID does not have the `<tenant>/<key>` shape.
 */
export function parseWorkflowId(workflowId: string): OperationRef | undefined {
  const slash = workflowId.indexOf('/');
  if (slash <= 0 || slash === workflowId.length - 1) return undefined;
  return { tenant: workflowId.slice(0, slash), key: workflowId.slice(slash + 1), workflowId };
}

/**
 * `<workflowId>/<suffix>`: the key a step sends downstream, the same on every retry. The
 * suffix is the step's, from its definition (`charge`); never the run ID or an attempt
 * number: both change on a retry or a reset, and the downstream must see the same key.
 */
export function downstreamKey(workflowId: string, keySuffix: string): string {
  return `${workflowId}/${keySuffix}`;
}

/**
 * The parts of a downstream key that arrives at a receiving service, or undefined when it
 * was not derived by retrysafe (a sandbox also serves other callers). The key of the
 * client may itself hold `/`, so the tenant ends at the first `/` and the suffix starts
 * after the last one.
 */
export function parseDownstreamKey(
  downstream: string,
): { tenant: string; key: string; workflowId: string; suffix: string } | undefined {
  const last = downstream.lastIndexOf('/');
  if (last < 0) return undefined;
  const ref = parseWorkflowId(downstream.slice(0, last));
  const suffix = downstream.slice(last + 1);
  if (!ref || suffix === '') return undefined;
  return { ...ref, suffix };
}

/**
 * `webhook:<tenant>/<key>`: the workflow ID of the notification workflow that delivers an
 * operation's completion webhook. An operation's ID is `<tenant>/<key>`, so whatever comes
 * before its first `/` is a tenant; `webhook:<tenant>` holds a `:`, which no tenant can, so
 * no client key (which may itself hold `/`, `:` or `webhook`) can ever name this ID, and a
 * GET of any key can never reach it. (A suffix such as `<wf>/webhook` would: it is the ID of
 * the key `<key>/webhook`.)
 */
export function notificationWorkflowId(operation: OperationRef): string {
  return `webhook:${operation.workflowId}`;
}

/**
 * `<tenant>/<key>/<runId>/completed`: the `webhook-id` of the completion event, the same on
 * every redelivery. The operation's run ID makes it unique when a key is reused after its
 * retention (a receiver that deduplicates on it would drop the second operation's event).
 * Without a run ID, `<tenant>/<key>/completed`: the ID of the events of notifications that
 * started before it carried one, which must keep it across their redeliveries.
 */
export function completionEventId(operation: OperationRef, runId?: string): string {
  return runId === undefined ? `${operation.workflowId}/completed` : `${operation.workflowId}/${runId}/completed`;
}
