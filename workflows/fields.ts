// What the operations' definitions share: request fields in TypeBox (the API validates
// with them and the OpenAPI document, the client's types and the CLI's options are made
// from them), and the bank's charge as a step: the one spelling of a charge, used by the
// built-in operations and by operations defined outside alike. Deterministic (imported by workflow code
// through the definitions): the currency list is the runtime's own ISO 4217 table, the
// same for the API and the worker of one release.
import { Type, type TProperties } from 'typebox';
import { keyedHttpStep, type StepDefinition } from './definition.js';
import { IDENTIFIER_PATTERN, IDENTIFIER_RULE } from './identity.js';

/** Ajv format: ISO 4217 codes this runtime knows (Node 20: the current, non-test codes). */
export const CURRENCY_FORMAT = 'iso4217';
export const CURRENCY_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
export const isCurrencyCode = (value: string) => CURRENCY_CODES.has(value);

export const MAX_AMOUNT = 1_000_000_000_000;

export { IDENTIFIER_PATTERN, IDENTIFIER_RULE };

/** A field that names something (an account, a SKU): IDENTIFIER_PATTERN. */
export const Identifier = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 128, pattern: IDENTIFIER_PATTERN, description, examples: [example] });

export const Account = (description: string) => Identifier(description, 'acc_alice');

/**
 * What free text may not hold: control characters (C0, DEL, C1), the line and paragraph
 * separators, and the bidirectional marks, embeddings, overrides and isolates that make text
 * read differently from what it holds (a "Trojan Source" description in a console or a log).
 */
export const FREE_TEXT_PATTERN =
  '^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069]*$';
/** FREE_TEXT_PATTERN in words, for a refused field. */
export const FREE_TEXT_RULE = 'must not hold control characters, line separators or bidirectional marks';

/** Free text kept with an operation (a description, a name): FREE_TEXT_PATTERN. */
export const FreeText = (options: { minLength?: number; maxLength: number; description: string }) =>
  Type.String({ ...options, pattern: FREE_TEXT_PATTERN });

export const Amount = Type.Integer({
  minimum: 1,
  maximum: MAX_AMOUNT,
  description: 'Amount in minor units (cents); an integer, never a string',
  examples: [1250],
});

// The codes are listed (enum), not only checked by a format, so that /openapi.json says
// exactly which values are accepted: a generated client or a fuzzer otherwise sends "QZX".
export const Currency = Type.String({
  pattern: '^[A-Z]{3}$',
  format: CURRENCY_FORMAT,
  enum: [...CURRENCY_CODES],
  description: 'ISO 4217 currency code',
  examples: ['EUR'],
});

export const Description = FreeText({ maxLength: 500, description: 'Free text kept with the operation' });

/** An operation's request: exactly these fields, described for the OpenAPI document. */
export const RequestBody = <P extends TProperties>(description: string, properties: P) =>
  Type.Object(properties, { additionalProperties: false, description });

/** The bank's final refusals of a charge, each the operation's error code of the same name. */
export const CHARGE_REFUSALS = {
  insufficient_funds: 'insufficient_funds',
  account_not_found: 'account_not_found',
  currency_mismatch: 'currency_mismatch',
} as const;

/**
 * A charge at the bank as a declared step: the request's `amount` in its `currency` taken
 * from the account in the request field `account`, reversed by the compensation `undo`, the
 * charge's id the operation's `resultField`; `unavailableCode` is the operation's error when
 * the charge is fenced (the operation's own by default).
 */
export function bankCharge(step: {
  name: string;
  keySuffix: string;
  account: string;
  undo: string;
  resultField: string;
  unavailableCode?: string;
}): StepDefinition {
  return keyedHttpStep({
    name: step.name,
    keySuffix: step.keySuffix,
    service: 'bank',
    collection: '/charges',
    body: { account: step.account, amount: 'amount', currency: 'currency' },
    businessErrors: CHARGE_REFUSALS,
    undo: { name: step.undo, action: 'reverse' },
    result: { [step.resultField]: 'id' },
    present: ['captured'],
    ...(step.unavailableCode ? { unavailableCode: step.unavailableCode } : {}),
  });
}

/**
 * Decimals of each currency asked about, once each: building an Intl.NumberFormat costs more
 * than the rest of a start's summary (the API makes one per operation it starts).
 */
const decimals = new Map<string, number>();

function decimalsOf(currency: string): number {
  let digits = decimals.get(currency);
  if (digits !== undefined) return digits;
  digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code never reaches here (validated), but a summary must never fail a start.
  }
  if (isCurrencyCode(currency)) decimals.set(currency, digits);
  return digits;
}

/** Minor units to a decimal string with the currency's own number of decimals (JPY 0, EUR 2). */
export function formatAmount(amount: number, currency: string): string {
  const digits = decimalsOf(currency);
  return `${currency} ${(amount / 10 ** digits).toFixed(digits)}`;
}
