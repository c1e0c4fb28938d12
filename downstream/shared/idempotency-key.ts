// Idempotency-Key parsing for the receiving side. The IETF draft makes the header a
// Structured Field string (`"abc"`); plenty of clients send it bare (`abc`). Both name
// the same key. Downstream keys are derived (`<tenant>/<key>/<step>`), hence 512, not 255.
import { parseItem } from 'structured-headers';
import { ProblemError } from './problem.js';

export const MAX_KEY_LENGTH = 512;
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

// A bare key is one token-ish run of visible ASCII; an sf-string may also hold spaces.
const BARE_KEY = /^[\x21-\x7e]+$/;
const SF_STRING_CONTENT = /^[\x20-\x7e]+$/;

function invalid(detail: string): ProblemError {
  return new ProblemError(400, 'idempotency_key_invalid', detail);
}

/**
 * The key named by an `Idempotency-Key` header value, or a 400 problem:
 * `idempotency_key_missing` when absent, `idempotency_key_invalid` when malformed.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new ProblemError(400, 'idempotency_key_missing', 'send an Idempotency-Key header with this request');
  }
  if (Array.isArray(header)) {
    throw invalid('send exactly one Idempotency-Key header');
  }
  // Only HTTP whitespace (RFC 9110 OWS): trim() would also eat an NBSP and accept it.
  const value = header.replace(/^[ \t]+|[ \t]+$/g, '');
  if (value === '') throw invalid('the Idempotency-Key header is empty');

  let key: string;
  if (value.startsWith('"')) {
    let item;
    try {
      item = parseItem(value);
    } catch {
      throw invalid('the Idempotency-Key header is not a valid Structured Field string');
    }
    const [bare, params] = item;
    if (typeof bare !== 'string') throw invalid('the Idempotency-Key header is not a Structured Field string');
    // Parameters would let `"k";a=1` and `"k"` look like different keys; none are defined.
    if (params.size > 0) throw invalid('the Idempotency-Key header must not carry parameters');
    key = bare;
  } else {
    if (!BARE_KEY.test(value)) {
      throw invalid('the Idempotency-Key must be visible ASCII characters without spaces (or a quoted Structured Field string)');
    }
    key = value;
  }
  return checkKey(key);
}

/** Validates a key taken from a URL path segment (already percent-decoded). */
export function checkKey(key: string): string {
  if (key.length === 0) throw invalid('the idempotency key is empty');
  if (key.length > MAX_KEY_LENGTH) {
    throw invalid(`the idempotency key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`);
  }
  if (!SF_STRING_CONTENT.test(key)) throw invalid('the idempotency key must be printable ASCII');
  return key;
}

/**
 * The key in a path such as `/charges/{key}/reverse`, read from the raw URL so that keys
 * holding `/` work both percent-encoded (`a%2Fb`) and as they are (`a/b`). Returns
 * undefined when the path does not have the shape `<prefix><key><suffix>`.
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
    throw invalid('the key in the URL is not validly percent-encoded');
  }
  return checkKey(key);
}
