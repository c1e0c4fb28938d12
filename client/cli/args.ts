// Argument parsers for commander: each refuses a bad value with a message naming what a
// good one looks like, and commander turns that into one line plus a usage hint (exit 2).
import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import { isValidKey, MAX_KEY_LENGTH } from '../api/idempotency-key.js';

// The set the API checks against (CURRENCY_CODES in client/api/schemas.ts), read here
// without loading the schemas, so `--help` and usage errors answer at once.
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export function parseAmount(raw: string): number {
  if (!/^\d+$/.test(raw.trim())) {
    throw new InvalidArgumentError('must be a whole number of minor units (12.50 EUR is --amount 1250)');
  }
  const amount = Number(raw.trim());
  if (amount < 1 || !Number.isSafeInteger(amount)) throw new InvalidArgumentError('must be at least 1 (minor units)');
  return amount;
}

export function parseCurrency(raw: string): string {
  const code = raw.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !CURRENCIES.has(code)) {
    throw new InvalidArgumentError('must be an ISO 4217 currency code such as EUR or USD');
  }
  return code;
}

export function parseKey(raw: string): string {
  if (!isValidKey(raw)) throw new InvalidArgumentError(`must be 1-${MAX_KEY_LENGTH} visible ASCII characters, without spaces`);
  return raw;
}

export interface Item {
  sku: string;
  quantity: number;
}

/** `--item sku_book:2` (quantity 1 when left out); repeatable. */
export function collectItem(raw: string, previous: Item[] = []): Item[] {
  const match = /^([^:\s]+)(?::(\d+))?$/.exec(raw.trim());
  if (!match) throw new InvalidArgumentError('must be <sku> or <sku>:<quantity>, e.g. sku_book:2');
  const quantity = match[2] === undefined ? 1 : Number(match[2]);
  if (quantity < 1 || quantity > 1000) throw new InvalidArgumentError('quantity must be between 1 and 1000');
  return [...previous, { sku: match[1] as string, quantity }];
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
