// The fingerprint binds an idempotency key to one request: the canonical hash of
// `{type, request}` (the fields the definition binds: all of them unless it names some),
// stored in the workflow memo when the key is claimed, so a retry matches it whatever the
// key order or whitespace of its body.
import { canonicalJson, fingerprintOf } from '../../common/http/fingerprint.js';
import type { OperationType } from '../../workflows/contracts.js';

export function fingerprint(type: OperationType, request: Record<string, unknown>): string {
  return fingerprintOf({ type, request });
}

/**
 * Names of the top-level fields that differ between the request that claimed a key and a
 * later one (`type` first when the operation type differs). Field names only: the values
 * may be another caller's data.
 */
export function requestDifferences(
  claimed: { type: string; request: Record<string, unknown> },
  incoming: { type: string; request: Record<string, unknown> },
): string[] {
  const out: string[] = [];
  if (claimed.type !== incoming.type) out.push('type');
  const fields = new Set([...Object.keys(claimed.request), ...Object.keys(incoming.request)]);
  for (const field of [...fields].sort()) {
    const a = claimed.request[field];
    const b = incoming.request[field];
    if (a === undefined && b === undefined) continue;
    if (a === undefined || b === undefined || canonicalJson(a) !== canonicalJson(b)) out.push(field);
  }
  return out;
}
