// The CLI refuses a body the API would refuse before sending it, with checks of its own
// (the package carries nothing of the server). They must agree with the API's schemas on
// every body, near every limit.
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { CheckoutBody, PaymentBody } from '../../client/api/schemas.js';
import { checkoutProblem, LIMITS, paymentProblem } from '../../client/cli/request-checks.js';

/** Strings around a length limit, with characters outside the BMP (one code point, two UTF-16 units). */
const around = (limit: number) =>
  fc.string({ unit: fc.constantFrom('a', 'é', '😀'), minLength: Math.max(0, limit - 3), maxLength: limit + 3 });

const payment = fc.record(
  {
    account: fc.oneof(around(LIMITS.account), around(1)),
    amount: fc.oneof(fc.constantFrom(0, 1, LIMITS.amount, LIMITS.amount + 1, 12.5, -1), fc.integer({ min: 1, max: 10_000 })),
    currency: fc.constantFrom('EUR', 'USD', 'JPY', 'XYZ', 'eur', 'EURO', ''),
    description: around(LIMITS.description),
  },
  { requiredKeys: ['account', 'amount', 'currency'] },
);

const item = fc.record({
  sku: fc.oneof(around(LIMITS.sku), around(1)),
  quantity: fc.constantFrom(0, 1, 7, LIMITS.quantity, LIMITS.quantity + 1, 2.5),
});
const items = fc.oneof(
  fc.array(item, { minLength: 0, maxLength: 3 }),
  fc.array(item, { minLength: LIMITS.items - 1, maxLength: LIMITS.items + 1 }),
);

describe('the CLI request checks agree with the API schemas', () => {
  it('payments: refused by the CLI exactly when the API schema refuses', () => {
    fc.assert(
      fc.property(payment, (body) => (paymentProblem(body) === undefined) === Value.Check(PaymentBody, body)),
      { numRuns: 1500 },
    );
  });

  it('checkouts: refused by the CLI exactly when the API schema refuses', () => {
    fc.assert(
      fc.property(
        payment,
        items,
        (body, list) =>
          (checkoutProblem({ ...body, items: list }) === undefined) === Value.Check(CheckoutBody, { ...body, items: list }),
      ),
      { numRuns: 800 },
    );
  });

  it('names the option to fix', () => {
    const ok = { account: 'acc_alice', amount: 5, currency: 'EUR' };
    expect(paymentProblem(ok)).toBeUndefined();
    expect(paymentProblem({ ...ok, account: 'x'.repeat(129) })).toBe("'--account' is invalid: must be 1-128 characters");
    expect(paymentProblem({ ...ok, account: '😀'.repeat(128) })).toBeUndefined();
    expect(paymentProblem({ ...ok, description: 'd'.repeat(501) })).toMatch(/^'--description' is invalid: .*500/);
    expect(paymentProblem({ ...ok, amount: 1_000_000_000_001 })).toMatch(/^'--amount' is invalid/);
    expect(checkoutProblem({ ...ok, items: [] })).toMatch(/^'--item' is invalid: give 1-100 items/);
    expect(checkoutProblem({ ...ok, items: [{ sku: 's'.repeat(129), quantity: 1 }] })).toMatch(/^'--item' is invalid: a sku/);
  });
});
