// The Idempotency-Key header, for the API and the sandboxes alike. The IETF draft makes it
// a Structured Field string (`"8e03978e-..."`); most clients send the bare value. Both name
// the same key, so a client that switches forms between a request and its retry still hits
// the same claim. What a key may hold is each side's own rule (KeyRules).
import { parseItem } from 'structured-headers';

export interface KeyRules {
  /** The longest key accepted. */
  maxLength: number;
  /** Whether a key may hold a space; only the sf-string form can carry one. */
  spaces: boolean;
  /**
   * What an empty header means: no key (what `-H "Idempotency-Key: $KEY"` sends when KEY
   * is unset), or a malformed one.
   */
  empty: 'missing' | 'invalid';
}

export type KeyResult =
  { ok: true; key: string } | { ok: false; code: 'idempotency_key_missing' | 'idempotency_key_invalid'; detail: string };

// A bare key is one run of visible ASCII; inside an sf-string a space is unambiguous.
const VISIBLE = /^[\x21-\x7e]+$/;
const PRINTABLE = /^[\x20-\x7e]+$/;

const missing = (): KeyResult => ({
  ok: false,
  code: 'idempotency_key_missing',
  detail: 'send an Idempotency-Key header with this request',
});
const invalid = (detail: string): KeyResult => ({ ok: false, code: 'idempotency_key_invalid', detail });

/**
 * Keys that cannot be a path segment: a resource path built from them (`/v1/operations/..`)
 * resolves to another one under RFC 3986, so a client told to poll it would poll elsewhere.
 */
const DOT_SEGMENTS: ReadonlySet<string> = new Set(['.', '..']);

/** Checks a key however it arrived: from the header, or percent-decoded from a URL path. */
export function checkKey(key: string, rules: KeyRules): KeyResult {
  if (key.length === 0 || key.length > rules.maxLength) {
    return invalid(`the idempotency key must be 1-${rules.maxLength} characters long`);
  }
  if (DOT_SEGMENTS.has(key)) {
    return invalid('the idempotency key cannot be "." or "..": as a path segment it would name another resource');
  }
  if (!(rules.spaces ? PRINTABLE : VISIBLE).test(key)) {
    return invalid(
      rules.spaces
        ? 'the idempotency key may hold only printable ASCII characters'
        : 'the idempotency key may hold only visible ASCII characters (no spaces or control characters)',
    );
  }
  return { ok: true, key };
}

/**
 * Parses the header value as Node hands it over. A repeated header arrives joined with
 * ", ", which is then refused: a bare key holds no space, and `"a", "b"` is no sf-string.
 */
export function parseIdempotencyKey(header: string | string[] | undefined, rules: KeyRules): KeyResult {
  if (Array.isArray(header)) {
    if (header.length > 1) return invalid('send a single Idempotency-Key header');
    header = header[0];
  }
  if (header === undefined) return missing();
  // HTTP's optional whitespace is SP and HTAB only: String.trim() would also strip a
  // non-ASCII NBSP (0xA0) and accept "\xA0abc" as the key "abc".
  const value = header.replace(/^[ \t]+|[ \t]+$/g, '');
  if (value === '') return rules.empty === 'missing' ? missing() : invalid('the Idempotency-Key header is empty');
  if (!value.startsWith('"')) {
    if (!VISIBLE.test(value)) {
      return invalid(
        'a bare idempotency key may hold only visible ASCII characters; quote it as a structured-field string otherwise',
      );
    }
    return checkKey(value, rules);
  }
  let item: ReturnType<typeof parseItem>;
  try {
    item = parseItem(value);
  } catch {
    return invalid('the Idempotency-Key header is not a valid structured-field string');
  }
  const [bare, params] = item;
  // Parameters would let `"k";a=1` and `"k"` look like different keys; none are defined.
  if (typeof bare !== 'string' || params.size > 0) {
    return invalid('the Idempotency-Key header must be a plain string, without parameters');
  }
  return checkKey(bare, rules);
}
