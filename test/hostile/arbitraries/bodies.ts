// Generators of the request bodies the hostile properties send: a payment or a checkout,
// valid, then bent by up to three mutations of its fields (type confusion, bounds, unicode,
// special numbers written as raw JSON), or not JSON at all; and the content types.
import fc from 'fast-check';

export type OpType = 'payment' | 'checkout';

/** A number as raw JSON text, so that -0, 1250.0 or 1e3 reach the server as written. */
class RawNumber {
  constructor(readonly text: string) {}
}
const RAW_MARK = 'RAW5f3a9c';
function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RawNumber) {
      raws.push(v.text);
      return `${RAW_MARK}${raws.length - 1}${RAW_MARK}`;
    }
    return v;
  });
  return text.replace(new RegExp(`"${RAW_MARK}(\\d+)${RAW_MARK}"`, 'g'), (_m, i: string) => raws[Number(i)]!);
}

const text = (max: number) =>
  fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: max }),
    fc.string({ unit: 'binary', maxLength: max }),
    fc.constantFrom(
      '\u0000',
      '\ud800',
      '\udfff',
      '😀'.repeat(Math.ceil(max / 2)),
      'a'.repeat(max),
      'a'.repeat(max + 1),
      '😀'.repeat(max),
      '😀'.repeat(max + 1),
    ),
  );
const raw = (...texts: string[]) => texts.map((t) => new RawNumber(t));

/** Stands for a body just over the limit (kept out of fast-check's counterexample output). */
export const BIG = '<a body over the limit>';
export const bigBody = (limit: number) => `{"account":"a","amount":1,"currency":"EUR","description":"${'x'.repeat(limit)}"}`;

/** A field that names something: a letter or digit, then letters, digits, `.`, `_`, `:` or `-`. */
const identifier = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,39}$/);
/** Free text without the control and bidirectional characters the API refuses. */
const refusedInText = (code: number) =>
  code < 0x20 ||
  (code >= 0x7f && code <= 0x9f) ||
  [0x061c, 0x200e, 0x200f, 0x2028, 0x2029].includes(code) ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);
const freeText = fc
  .string({ unit: 'grapheme', maxLength: 60 })
  .filter((s) => ![...s].some((c) => refusedInText(c.codePointAt(0)!)));

/** A body for `POST /v1/payments` or `/v1/checkouts`, naming the account and the SKU the suite set up. */
export function bodyCase({ account, sku }: { account: string; sku: string }): fc.Arbitrary<{ type: OpType; text: string }> {
  /** Valid values of each field: a body built from these alone is accepted. */
  const goodField = {
    account: fc.oneof({ weight: 3, arbitrary: fc.constant(account) }, { weight: 1, arbitrary: identifier }),
    amount: fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 1_000_000_000_000 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(...raw('1250.0', '1e3', '1E12', '0.1e1', '1000000000000')) },
    ),
    currency: fc.constantFrom('EUR', 'EUR', 'EUR', 'USD', 'JPY'),
    description: fc.option(freeText, { nil: undefined, freq: 2 }),
    items: fc.array(
      fc.record({
        sku: fc.oneof(fc.constant(sku), identifier),
        quantity: fc.integer({ min: 1, max: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  };

  /** Values that bend a field: type confusion, bounds, unicode, special numbers (a few are still valid). */
  const badField: Record<string, fc.Arbitrary<unknown>> = {
    account: fc.oneof(
      text(129),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      fc.constantFrom<unknown>(
        '',
        123,
        null,
        true,
        { id: account },
        [account],
        `${account}\u0000`,
        'acc alice',
        '.acc',
        'a/b',
        'a`b',
      ),
    ),
    amount: fc.oneof(
      fc.constantFrom<unknown>(
        ...raw(
          '-0',
          '0',
          '1e12',
          '1000000000001',
          '1e308',
          '9007199254740993',
          '1.5',
          '-1',
          '1e-7',
          '123456789012345678901234567890',
          '-1250',
        ),
        '1250',
        'NaN',
        'Infinity',
        '-Infinity',
        '',
        null,
        true,
        [1250],
        { value: 1250 },
      ),
      fc.double(),
    ),
    currency: fc.oneof(
      fc.constantFrom<unknown>('eur', 'EU', 'EURO', 'E\u0301UR', 'ＥＵＲ', 'XYZ', 'AAA', '', 978, null, ['EUR'], ' EUR'),
      fc.string({ maxLength: 4 }),
    ),
    description: fc.oneof(
      text(501),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.constantFrom<unknown>(
        null,
        42,
        ['x'],
        { text: 'x' },
        'a\u0000b',
        'line\nbreak',
        'x\u202ey',
        'a\u2066b\u2069',
        'x\u0085',
      ),
    ),
    items: fc.oneof(
      fc.constantFrom<unknown>([], null, {}, 'sku_book', [[]], [null]),
      fc.constantFrom(99, 100, 101).map((n) => Array.from({ length: n }, () => ({ sku, quantity: 1 }))),
      fc.array(
        fc.oneof(
          fc.record({
            sku: fc.constant(sku),
            quantity: fc.constantFrom<unknown>(0, 1000, 1001, '2', -1, 2.5, null, ...raw('2.0', '-0', '1e3')),
          }),
          fc.record({
            sku: fc.oneof(
              text(129),
              fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
              fc.constantFrom<unknown>('', 7, null, 'sku\u0000'),
            ),
            quantity: fc.constant(1),
          }),
          fc.record({ sku: fc.constant(sku), quantity: fc.constant(1), extra: fc.jsonValue({ maxDepth: 2 }) }),
          fc.record({ sku: fc.constant(sku) }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        { minLength: 1, maxLength: 3 },
      ),
    ),
  };
  const fieldName = fc.constantFrom('account', 'amount', 'currency', 'description', 'items');
  const mutation = fc.oneof(
    { weight: 6, arbitrary: fieldName.chain((field) => badField[field]!.map((value) => ({ op: 'set' as const, field, value }))) },
    { weight: 2, arbitrary: fieldName.map((field) => ({ op: 'drop' as const, field })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.oneof(
            fc.string({ maxLength: 12 }),
            fc.constantFrom('__proto__', 'constructor', 'prototype', 'Amount', 'amount ', 'toString'),
          ),
          fc.jsonValue({ maxDepth: 3 }),
        )
        .map(([field, value]) => ({ op: 'extra' as const, field, value })),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ op: 'nest' as const, field: 'account', value })) },
  );

  /** A payment or checkout body: valid, then bent by zero to three mutations. */
  const nearValidBody = fc
    .record({
      type: fc.constantFrom<OpType>('payment', 'checkout'),
      ...goodField,
      mutations: fc.oneof(
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 8, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
      ),
    })
    .map(({ type, mutations, ...f }) => {
      const body: Record<string, unknown> = { account: f.account, amount: f.amount, currency: f.currency };
      if (f.description !== undefined) body.description = f.description;
      if (type === 'checkout') body.items = f.items;
      for (const m of mutations) {
        if (m.op === 'drop') delete body[m.field];
        else if (m.op === 'nest') body[m.field] = { [m.field]: body[m.field], nested: m.value };
        // defineProperty: a "__proto__" key must become an own field of the JSON text.
        else Object.defineProperty(body, m.field, { value: m.value, enumerable: true, writable: true, configurable: true });
      }
      return { type, text: toJson(body) };
    });

  return fc.oneof(
    { weight: 8, arbitrary: nearValidBody },
    { weight: 2, arbitrary: fc.record({ type: fc.constantFrom<OpType>('payment', 'checkout'), text: fc.json({ maxDepth: 4 }) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        type: fc.constantFrom<OpType>('payment', 'checkout'),
        text: fc.constantFrom(
          '',
          ' ',
          'null',
          '[]',
          '"x"',
          '{',
          '{"account":',
          '{"amount":NaN}',
          '{"amount":Infinity}',
          "{'a':1}",
          '{"a":1}{"b":2}',
          '{"account":"a","amount":1,"currency":"EUR",}',
          '\u0000',
          BIG,
        ),
      }),
    },
  );
}

export const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/xml', undefined) },
);
