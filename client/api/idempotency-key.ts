// The Idempotency-Key header. The IETF draft makes it a Structured Field string
// (`"8e03978e-..."`); most clients send the bare value. Both name the same key, so a
// client that switches forms between a request and its retry still hits the same claim.
import { parseItem } from 'structured-headers';

export const MAX_KEY_LENGTH = 255;

export type KeyParseResult =
  | { ok: true; key: string }
  | { ok: false; code: 'idempotency_key_missing' | 'idempotency_key_invalid'; detail: string };

/** 1-255 characters, each visible ASCII (0x21-0x7E). */
export function isValidKey(key: string): boolean {
  return key.length >= 1 && key.length <= MAX_KEY_LENGTH && /^[\x21-\x7e]+$/.test(key);
}

const invalid = (detail: string): KeyParseResult => ({ ok: false, code: 'idempotency_key_invalid', detail });

/**
 * Parses the header value as Node hands it over (a repeated header arrives joined with
 * ", ", which is then invalid, since a space is not visible ASCII).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): KeyParseResult {
  if (Array.isArray(header)) {
    if (header.length > 1) return invalid('send a single Idempotency-Key header');
    header = header[0];
  }
  // HTTP's optional whitespace is SP and HTAB only: String.trim() would also strip a
  // non-ASCII NBSP (0xA0) and accept "\xA0abc" as the key "abc".
  const value = header?.replace(/^[ \t]+|[ \t]+$/g, '');
  // An empty header is what `-H "Idempotency-Key: $KEY"` sends when KEY is unset: no key.
  if (value === undefined || value === '') {
    return { ok: false, code: 'idempotency_key_missing', detail: 'the Idempotency-Key header is required' };
  }
  let key: string;
  if (value.startsWith('"')) {
    let item: ReturnType<typeof parseItem>;
    try {
      item = parseItem(value);
    } catch {
      return invalid('the Idempotency-Key header is not a valid structured-field string');
    }
    const [bare, params] = item;
    if (typeof bare !== 'string' || params.size > 0) {
      return invalid('the Idempotency-Key header must be a plain string, without parameters');
    }
    key = bare;
  } else {
    key = value;
  }
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    return invalid(`the idempotency key must be 1-${MAX_KEY_LENGTH} characters long`);
  }
  if (!/^[\x21-\x7e]+$/.test(key)) {
    return invalid('the idempotency key may hold only visible ASCII characters (no spaces or control characters)');
  }
  return { ok: true, key };
}
