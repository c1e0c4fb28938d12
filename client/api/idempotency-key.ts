// What a client's idempotency key may be: 1-255 visible ASCII characters. An empty header
// is no key at all, since that is what `-H "Idempotency-Key: $KEY"` sends when KEY is unset.
// The CLI and the client library check keys by the same rule before sending them.
import { checkKey, parseIdempotencyKey, type KeyResult, type KeyRules } from '../../common/http/idempotency-key.js';

export const MAX_KEY_LENGTH = 255;

export const CLIENT_KEY_RULES: KeyRules = { maxLength: MAX_KEY_LENGTH, spaces: false, empty: 'missing' };

export function parseClientKey(header: string | string[] | undefined): KeyResult {
  return parseIdempotencyKey(header, CLIENT_KEY_RULES);
}

/** Whether `key` (from a URL path, a CLI flag) could name an operation at all. */
export function isValidKey(key: string): boolean {
  return checkKey(key, CLIENT_KEY_RULES).ok;
}
