// What "the same request" means: SHA-256 over the canonical JSON (RFC 8785: sorted keys,
// normalised numbers) of the endpoint and the validated body, so key order and spacing
// in the client's JSON never make a retry look like a different request.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS with an ESM-style `export default` in its typings: Node hands
// us the function itself, the typings promise `{ default }`. Accept either.
const canonicalize = ((canonicalizeModule as unknown as { default?: unknown }).default ??
  canonicalizeModule) as (input: unknown) => string | undefined;

export function requestFingerprint(endpoint: string, body: unknown): string {
  const canonical = canonicalize({ endpoint, body: body ?? null });
  if (canonical === undefined) throw new Error('request cannot be fingerprinted');
  return createHash('sha256').update(canonical).digest('hex');
}
