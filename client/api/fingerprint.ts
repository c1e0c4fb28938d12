// The fingerprint binds an idempotency key to one request: SHA-256 over the canonical JSON
// (RFC 8785: sorted keys, normalised numbers) of `{type, request}`. Key order and
// whitespace in the body therefore never make a retry look like a different request.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { OperationType } from '../../workflows/contracts.js';

// canonicalize ships CommonJS typed as an ES default export; under NodeNext the default
// import is the function itself at run time, whatever the typings claim.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

export function fingerprint(type: OperationType, request: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson({ type, request })).digest('hex');
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
