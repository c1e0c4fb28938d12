// The Prefer header (RFC 7240) as it bounds how long a POST waits for the outcome.
// `wait=N` waits up to N seconds; `respond-async` alone means do not wait. With both, the
// RFC reads "answer asynchronously if it takes longer than N", which is what wait=N does.
// Unknown preferences are ignored (RFC 7240 §2); only the first of a repeated one counts.

export const MAX_WAIT_SECONDS = 60;

export interface WaitPreference {
  waitMs: number;
  /** Value for Preference-Applied, or undefined when the client expressed no preference we honoured. */
  applied: string | undefined;
}

export type PreferResult = { ok: true; value: WaitPreference } | { ok: false; message: string };

interface Preference {
  name: string;
  /** undefined: no value given; null: a value that is neither a token nor a quoted string. */
  value: string | undefined | null;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Splits on `sep` outside quoted strings. */
function splitOutsideQuotes(input: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < input.length; i++) {
    const ch = input[i]!;
    if (quoted) {
      current += ch;
      if (ch === '\\' && i + 1 < input.length) current += input[++i];
      else if (ch === '"') quoted = false;
    } else if (ch === '"') {
      quoted = true;
      current += ch;
    } else if (ch === sep) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unquote(word: string): string | undefined {
  if (!word.startsWith('"')) return TOKEN.test(word) ? word : undefined;
  if (word.length < 2 || !word.endsWith('"')) return undefined;
  return word.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** Preferences in order; malformed members are skipped, as a recipient must ignore what it cannot parse. */
export function parsePreferences(header: string): Preference[] {
  const out: Preference[] = [];
  for (const member of splitOutsideQuotes(header, ',')) {
    const [head] = splitOutsideQuotes(member, ';');
    const text = (head ?? '').trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    if (!TOKEN.test(name)) continue;
    const value = eq < 0 ? undefined : (unquote(text.slice(eq + 1).trim()) ?? null);
    out.push({ name, value });
  }
  return out;
}

export function parsePrefer(header: string | string[] | undefined, defaultWaitMs: number): PreferResult {
  const joined = Array.isArray(header) ? header.join(', ') : header;
  if (joined === undefined || joined.trim() === '') return { ok: true, value: { waitMs: defaultWaitMs, applied: undefined } };
  const prefs = parsePreferences(joined);
  const wait = prefs.find((p) => p.name === 'wait');
  const respondAsync = prefs.some((p) => p.name === 'respond-async');
  if (wait) {
    const raw = wait.value;
    if (raw === undefined || raw === null || !/^\d+$/.test(raw)) {
      return { ok: false, message: `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}` };
    }
    const seconds = Number(raw);
    if (seconds > MAX_WAIT_SECONDS) {
      return { ok: false, message: `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}` };
    }
    const applied = respondAsync ? `respond-async, wait=${seconds}` : `wait=${seconds}`;
    return { ok: true, value: { waitMs: seconds * 1000, applied } };
  }
  if (respondAsync) return { ok: true, value: { waitMs: 0, applied: 'respond-async' } };
  return { ok: true, value: { waitMs: defaultWaitMs, applied: undefined } };
}
