// Argument parsers for commander: each refuses a bad value with a message naming what a
// good one looks like, and commander turns that into one line plus a usage hint (exit 2).
import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import { isValidKey, MAX_KEY_LENGTH } from '../lib/keys.js';

export function parseKey(raw: string): string {
  if (!isValidKey(raw))
    throw new InvalidArgumentError(`must be 1-${MAX_KEY_LENGTH} visible ASCII characters, without spaces, and not "." or ".."`);
  return raw;
}

/** `--type`: an operation type's name (the API says whether it has one). */
export function parseOperationType(raw: string): string {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(raw))
    throw new InvalidArgumentError('must be an operation type such as payment or checkout');
  return raw;
}

/** `--version-of-definition`: a definition version as the resource shows it (16 lower-case hex characters). */
export function parseDefinitionVersion(raw: string): string {
  if (!/^[0-9a-f]{16}$/.test(raw))
    throw new InvalidArgumentError('must be a definition version: 16 hex characters, as definition.version shows it');
  return raw;
}

/** `30s`, `2m`, `500ms`, or plain milliseconds (the project's duration format). */
export function parseDuration(raw: string): number {
  const trimmed = raw.trim();
  const value = /^\d+$/.test(trimmed) ? Number(trimmed) : (ms(trimmed as ms.StringValue) as number | undefined);
  if (value === undefined || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError('must be a duration such as 30s, 2m or 500ms (a plain number is milliseconds)');
  }
  if (value > 86_400_000) throw new InvalidArgumentError('must be at most 1 day');
  return value;
}

export function parseLimit(raw: string): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 100) {
    throw new InvalidArgumentError('must be a whole number from 1 to 100');
  }
  return Number(raw);
}

export function parseHttpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://localhost:3000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('must start with http:// or https://');
  return url.toString().replace(/\/+$/, '');
}

/** `--cursor`: opaque to the client, but one token of visible ASCII (a value the shell did not mangle). */
export function parseCursor(raw: string): string {
  if (!/^[\x21-\x7e]{1,8192}$/.test(raw)) {
    throw new InvalidArgumentError('must be the cursor printed after the previous page (one word, no spaces)');
  }
  return raw;
}

/** `--port 3100`; 0 takes any free port (the URL printed at start says which). */
export function parsePort(raw: string): number {
  const trimmed = raw.trim();
  if (!/^\d{1,5}$/.test(trimmed) || Number(trimmed) > 65_535) {
    throw new InvalidArgumentError('must be a port number from 0 to 65535 (0: any free port)');
  }
  return Number(trimmed);
}

/** Standard Webhooks' secret format: `whsec_` and the base64 of the key. */
const WEBHOOK_SECRET = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;
/** The worker's own floor for a tenant's key (RETRYSAFE_WEBHOOK_SECRETS). */
const MIN_WEBHOOK_KEY_BYTES = 24;

/**
 * What is wrong with a signing secret, or undefined. Not an option parser: commander's
 * message would repeat the value, and a mistyped secret may still be most of a real one.
 */
export function webhookSecretProblem(raw: string): string | undefined {
  const match = WEBHOOK_SECRET.exec(raw);
  if (match && Buffer.from(match[1] as string, 'base64').length >= MIN_WEBHOOK_KEY_BYTES) return undefined;
  return `must be whsec_ followed by the base64 of at least ${MIN_WEBHOOK_KEY_BYTES} bytes, as your tenant's secret in the worker's RETRYSAFE_WEBHOOK_SECRETS`;
}
