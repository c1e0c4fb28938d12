// The CLI refuses a body the API would refuse before sending it, by checking it against the
// operation's request schema as the client package carries it (generated from the catalog:
// lib/operations.ts). The client's check and the API's validation must agree on every
// body, near every limit, for every built-in operation.
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { requestProblem } from '../../client/cli/type-commands.js';
import { BUILT_IN_OPERATIONS } from '../../client/lib/discovery.js';
import { PATTERN_RULES } from '../../client/lib/schema-check.js';
import { FREE_TEXT_PATTERN, FREE_TEXT_RULE, IDENTIFIER_PATTERN, IDENTIFIER_RULE } from '../../workflows/fields.js';
import { builtInCatalog } from '../../workflows/catalog.js';

const AMOUNT_MAX = 1_000_000_000_000;

/** Strings around a length limit, with characters outside the BMP (one code point, two UTF-16 units). */
const around = (limit: number) =>
  fc.string({ unit: fc.constantFrom('a', 'é', '😀'), minLength: Math.max(0, limit - 3), maxLength: limit + 3 });
const account = fc.oneof(
  around(128),
  around(1),
  fc.constantFrom('acc_alice', 'acc-1.eu:2', '_acc', '.', 'acc alice', 'acc\u0000', 'a/b', 'a`b'),
);
const amount = fc.oneof(fc.constantFrom(0, 1, AMOUNT_MAX, AMOUNT_MAX + 1, 12.5, -1), fc.integer({ min: 1, max: 10_000 }));
const currency = fc.constantFrom('EUR', 'USD', 'JPY', 'XYZ', 'eur', 'EURO', '');
// Text with the characters free text refuses: a NUL, a newline, DEL, a C1 control, bidi overrides and isolates.
const description = fc.oneof(
  around(500),
  fc.string({
    unit: fc.constantFrom('a', 'é', '\u0000', '\n', '\u007f', '\u0085', '\u202e', '\u2066', '\u200f', '\u2028'),
    maxLength: 6,
  }),
);
const item = fc.record({ sku: fc.oneof(around(128), around(1)), quantity: fc.constantFrom(0, 1, 7, 1000, 1001, 2.5) });
const items = fc.oneof(fc.array(item, { minLength: 0, maxLength: 3 }), fc.array(item, { minLength: 99, maxLength: 101 }));

const bodies = {
  payment: fc.record({ account, amount, currency, description }, { requiredKeys: ['account', 'amount', 'currency'] }),
  checkout: fc.record({ account, amount, currency, description, items }, { requiredKeys: ['account', 'amount', 'currency'] }),
  transfer: fc.record(
    { from: account, to: account, amount, currency, description },
    { requiredKeys: ['from', 'amount', 'currency'] },
  ),
};

describe('the CLI request checks agree with the API schemas', () => {
  it('cover every built-in operation', () => {
    expect(Object.keys(bodies).sort()).toEqual([...builtInCatalog.types].sort());
  });

  it.each(Object.keys(bodies) as Array<keyof typeof bodies>)(
    '%s: refused by the CLI exactly when the API schema refuses',
    (type) => {
      const client = BUILT_IN_OPERATIONS[type]!.request;
      const api = builtInCatalog.get(type)!.request;
      fc.assert(
        fc.property(bodies[type], (body) => (requestProblem(client, body) === undefined) === Value.Check(api, body)),
        { numRuns: 800 },
      );
    },
  );

  it('names the option to fix', () => {
    const payment = BUILT_IN_OPERATIONS.payment!.request;
    const checkout = BUILT_IN_OPERATIONS.checkout!.request;
    const ok = { account: 'acc_alice', amount: 5, currency: 'EUR' };
    expect(requestProblem(payment, ok)).toBeUndefined();
    expect(requestProblem(payment, { ...ok, account: 'x'.repeat(129) })).toBe("'--account' is invalid: must be 1-128 characters");
    expect(requestProblem(payment, { ...ok, account: 'A'.repeat(128) })).toBeUndefined();
    expect(requestProblem(payment, { ...ok, account: '😀' })).toBe(`'--account' is invalid: ${IDENTIFIER_RULE}`);
    expect(requestProblem(payment, { ...ok, description: 'pay \u202egnp.exe' })).toBe(
      `'--description' is invalid: ${FREE_TEXT_RULE}`,
    );
    expect(requestProblem(payment, { ...ok, description: 'd'.repeat(501) })).toMatch(/^'--description' is invalid: .*500/);
    expect(requestProblem(payment, { ...ok, amount: 1_000_000_000_001 })).toBe(
      "'--amount' is invalid: must be a whole number from 1 to 1000000000000",
    );
    expect(requestProblem(payment, { ...ok, currency: 'QZX' })).toBe(
      "'--currency' is invalid: must be an ISO 4217 currency code such as EUR or USD",
    );
    expect(requestProblem(checkout, { ...ok, items: [] })).toBe("'--item' is invalid: must have 1-100 entries");
    expect(requestProblem(checkout, { ...ok, items: [{ sku: 's'.repeat(129), quantity: 1 }] })).toBe(
      "'--item' is invalid: sku must be 1-128 characters",
    );
    expect(requestProblem(checkout, { ...ok })).toBe("'--item' is invalid: is required");
  });

  it("words the API's identifier and free-text patterns as the API does", () => {
    expect(PATTERN_RULES).toEqual({ [IDENTIFIER_PATTERN]: IDENTIFIER_RULE, [FREE_TEXT_PATTERN]: FREE_TEXT_RULE });
  });
});
