// The API's limits on a request body, checked before anything is sent, so what the option
// parsers cannot see (an account id too long, too many items) is a usage error (exit 2)
// rather than a 400 from the server. test/cli/request-checks.test.ts holds these checks to
// the API's own schemas.
import type { CheckoutParams, PaymentParams } from '../lib/index.js';

export const LIMITS = {
  account: 128,
  amount: 1_000_000_000_000,
  description: 500,
  items: 100,
  sku: 128,
  quantity: 1000,
} as const;

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Length in Unicode code points, as JSON Schema counts it (an emoji is one character, not two). */
const chars = (text: string) => [...text].length;

/** "<option> <message>" for the first field the API would refuse, or undefined. */
export function paymentProblem(body: PaymentParams): string | undefined {
  if (chars(body.account) < 1 || chars(body.account) > LIMITS.account) {
    return `'--account' is invalid: must be 1-${LIMITS.account} characters`;
  }
  if (!Number.isInteger(body.amount) || body.amount < 1 || body.amount > LIMITS.amount) {
    return `'--amount' is invalid: must be a whole number from 1 to ${LIMITS.amount}`;
  }
  if (!/^[A-Z]{3}$/.test(body.currency) || !CURRENCIES.has(body.currency)) {
    return `'--currency' is invalid: must be an ISO 4217 currency code`;
  }
  if (body.description !== undefined && chars(body.description) > LIMITS.description) {
    return `'--description' is invalid: must be at most ${LIMITS.description} characters`;
  }
  return undefined;
}

export function checkoutProblem(body: CheckoutParams): string | undefined {
  const problem = paymentProblem(body);
  if (problem !== undefined) return problem;
  if (body.items.length < 1 || body.items.length > LIMITS.items) {
    return `'--item' is invalid: give 1-${LIMITS.items} items`;
  }
  for (const item of body.items) {
    if (chars(item.sku) < 1 || chars(item.sku) > LIMITS.sku) {
      return `'--item' is invalid: a sku must be 1-${LIMITS.sku} characters`;
    }
    if (!Number.isInteger(item.quantity) || item.quantity < 1 || item.quantity > LIMITS.quantity) {
      return `'--item' is invalid: a quantity must be a whole number from 1 to ${LIMITS.quantity}`;
    }
  }
  return undefined;
}
