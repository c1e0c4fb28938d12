// What the API's contract (keys, bodies, Prefer, list queries) says it must answer, written independently of the
// API's own parsers so that the property tests compare two readings of the same text.

/** Bytes Node's HTTP parser refuses in a header value (the request never reaches a route). */
export const PARSER_REFUSED_BYTES: ReadonlySet<number> = new Set([
  ...Array.from({ length: 0x09 }, (_, i) => i),
  0x0b,
  0x0c,
  ...Array.from({ length: 0x20 - 0x0e }, (_, i) => 0x0e + i),
  0x7f,
]);

export type KeyVerdict =
  | { kind: 'valid'; key: string }
  | { kind: 'missing' }
  | { kind: 'invalid' }
  /** A byte the HTTP parser refuses: 400 before any route runs. */
  | { kind: 'unparseable' };

const visibleAscii = (s: string) => s.length > 0 && [...s].every((c) => c.charCodeAt(0) >= 0x21 && c.charCodeAt(0) <= 0x7e);

/** The Idempotency-Key header as sent on the wire (bytes): 1-255 visible ASCII, bare or an sf-string. */
export function judgeKey(raw: Buffer | undefined): KeyVerdict {
  if (raw === undefined) return { kind: 'missing' };
  if (raw.some((b) => PARSER_REFUSED_BYTES.has(b))) return { kind: 'unparseable' };
  // HTTP strips optional whitespace (SP, HTAB) around a field value, and nothing else.
  const value = raw.toString('latin1').replace(/^[ \t]+|[ \t]+$/g, '');
  if (value === '') return { kind: 'missing' };
  let key = value;
  if (value.startsWith('"')) {
    // RFC 8941 sf-string: %x20-21 / %x23-5B / %x5D-7E, escapes \" and \\ only, no parameters.
    key = '';
    let i = 1;
    for (;;) {
      const c = value[i];
      if (c === undefined) return { kind: 'invalid' };
      if (c === '\\') {
        const next = value[i + 1];
        if (next !== '"' && next !== '\\') return { kind: 'invalid' };
        key += next;
        i += 2;
        continue;
      }
      if (c === '"') break;
      const code = c.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) return { kind: 'invalid' };
      key += c;
      i++;
    }
    if (i !== value.length - 1) return { kind: 'invalid' };
  }
  // `.` and `..` are no path segment: their Location would resolve to another resource.
  return key.length <= 255 && visibleAscii(key) && key !== '.' && key !== '..' ? { kind: 'valid', key } : { kind: 'invalid' };
}

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
const codePoints = (s: string) => [...s].length;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringOf(v: unknown, min: number, max: number): boolean {
  return typeof v === 'string' && codePoints(v) >= min && codePoints(v) <= max;
}

/** An identifier: a letter or digit, then letters, digits, `.`, `_`, `:` or `-`; 128 in all at most. */
function identifier(v: unknown): boolean {
  return typeof v === 'string' && v.length <= 128 && /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(v);
}

/** Free text: no C0 or C1 control, DEL, line or paragraph separator, or bidirectional mark, embedding, override or isolate. */
function freeText(v: unknown, max: number): boolean {
  if (!stringOf(v, 0, max)) return false;
  return [...(v as string)].every((c) => {
    const code = c.codePointAt(0)!;
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
    const bidi =
      [0x061c, 0x200e, 0x200f, 0x2028, 0x2029].includes(code) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069);
    return !control && !bidi;
  });
}

function integerIn(v: unknown, min: number, max: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/** Whether a parsed JSON body is a valid payment / checkout request. */
export function isValidBody(type: 'payment' | 'checkout', body: unknown): boolean {
  if (!isObject(body)) return false;
  const allowed =
    type === 'payment'
      ? ['account', 'amount', 'currency', 'description']
      : ['account', 'amount', 'currency', 'description', 'items'];
  if (Object.keys(body).some((k) => !allowed.includes(k))) return false;
  if (!identifier(body.account)) return false;
  if (!integerIn(body.amount, 1, 1_000_000_000_000)) return false;
  if (typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency) || !CURRENCIES.has(body.currency)) return false;
  if ('description' in body && !freeText(body.description, 500)) return false;
  if (type === 'checkout') {
    const items = body.items;
    if (!Array.isArray(items) || items.length < 1 || items.length > 100) return false;
    for (const item of items) {
      if (!isObject(item) || Object.keys(item).some((k) => k !== 'sku' && k !== 'quantity')) return false;
      if (!identifier(item.sku) || !integerIn(item.quantity, 1, 1000)) return false;
    }
  }
  return true;
}

/** Keys that secure-json-parse refuses on sight (prototype poisoning). */
export function hasPoisonKeys(text: string): boolean {
  return /"__proto__"\s*:/.test(text) || (/"constructor"\s*:/.test(text) && /"prototype"\s*:/.test(text));
}

export type PreferVerdict = { ok: true; applied?: string } | { ok: false };

/**
 * A Prefer header built from well-formed members (RFC 7240): the first `wait` decides;
 * it must be a whole number of seconds, 0-60, as a token or a quoted string.
 */
export function judgePrefer(members: Array<{ name: string; value?: string }>): PreferVerdict {
  const wait = members.find((m) => m.name.toLowerCase() === 'wait');
  const async = members.some((m) => m.name.toLowerCase() === 'respond-async');
  if (wait) {
    const v = wait.value?.startsWith('"') ? wait.value.slice(1, -1) : wait.value;
    if (v === undefined || !/^\d+$/.test(v) || Number(v) > 60) return { ok: false };
    const n = Number(v);
    return { ok: true, applied: async ? `respond-async, wait=${n}` : `wait=${n}` };
  }
  return async ? { ok: true, applied: 'respond-async' } : { ok: true };
}

/** A list query built from name=value pairs (already decoded): valid without a cursor. */
export function isValidListQuery(pairs: Array<[string, string]>): boolean {
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    if (seen.has(name)) return false;
    seen.add(name);
    if (name === 'status' && !['processing', 'succeeded', 'failed'].includes(value)) return false;
    else if (name === 'type' && !['payment', 'checkout'].includes(value)) return false;
    else if (name === 'limit' && !/^(100|[1-9][0-9]?)$/.test(value)) return false;
    else if (!['status', 'type', 'limit'].includes(name)) return false;
  }
  return true;
}
