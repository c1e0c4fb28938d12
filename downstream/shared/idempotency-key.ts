// Idempotency keys on the receiving side. Keys here are derived (`<tenant>/<key>/<step>`),
// hence up to 512 characters, not 255; an sf-string key may hold a space; and an empty
// header is a malformed key rather than a missing one: a caller that sends the header
// meant to send a key.
import type { FastifyRequest } from 'fastify';
import { checkKey, parseIdempotencyKey, type KeyResult, type KeyRules } from '../../common/http/idempotency-key.js';
import { Problem } from '../../common/http/problem.js';

export const DOWNSTREAM_KEY_RULES: KeyRules = { maxLength: 512, spaces: true, empty: 'invalid' };

function accepted(result: KeyResult): string {
  if (!result.ok) throw new Problem(400, result.code, result.detail);
  return result.key;
}

/** The key an `Idempotency-Key` header value names, or a 400 problem. */
export function requireKey(header: string | string[] | undefined): string {
  return accepted(parseIdempotencyKey(header, DOWNSTREAM_KEY_RULES));
}

/**
 * The key in a path such as `/charges/{key}/reverse`, read from the raw URL so that keys
 * holding `/` work both percent-encoded (`a%2Fb`) and as they are (`a/b`). Undefined when
 * the path does not have the shape `<prefix><key><suffix>`; a 400 problem when the key in
 * it is not one.
 */
export function keyFromPath(rawUrl: string, prefix: string, suffix = ''): string | undefined {
  const path = rawUrl.split('?', 1)[0] ?? '';
  if (!path.startsWith(prefix) || !path.endsWith(suffix)) return undefined;
  const encoded = path.slice(prefix.length, path.length - suffix.length);
  if (encoded === '') return undefined;
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    throw new Problem(400, 'idempotency_key_invalid', 'the key in the URL is not validly percent-encoded');
  }
  return accepted(checkKey(key, DOWNSTREAM_KEY_RULES));
}

// The parsed key travels from the preValidation hook to the handler without widening
// FastifyRequest for every other module in the project.
const keys = new WeakMap<FastifyRequest, string>();

/**
 * preValidation hook for keyed routes: a missing or malformed key is refused before the
 * body is even looked at, and nothing is stored, so the key stays usable.
 */
export async function requireIdempotencyKey(request: FastifyRequest): Promise<void> {
  keys.set(request, requireKey(request.headers['idempotency-key']));
}

export function idempotencyKeyOf(request: FastifyRequest): string {
  const key = keys.get(request);
  if (key === undefined) throw new Error('route is missing the requireIdempotencyKey hook');
  return key;
}
