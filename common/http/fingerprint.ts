// What "the same request" means on both sides of every idempotency key: SHA-256 over the
// canonical JSON (RFC 8785: sorted keys, normalised numbers) of what the request asks for,
// so key order and whitespace in a client's JSON never make a retry look like a different
// request. Stored fingerprints outlive deploys (workflow memos, sandbox key rows): the
// output for a given input must never change.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS (`module.exports = serialize`) with a typing that says
// `export default`. Under NodeNext, TypeScript reads that typing as `{ default: serialize }`,
// but Node, tsx and vitest all hand an ES import the `module.exports` function itself
// (its `.default` is undefined). The cast states what arrives at run time.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** Lower-case hex SHA-256 of the canonical JSON of `value`. */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
