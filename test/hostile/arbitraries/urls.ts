// Generators of the read routes' URLs: the key in GET /v1/operations/{key} (a tenant's own
// keys, another tenant's, and paths no encoder would write) and the query strings of
// GET /v1/operations (valid pairs, bent ones, raw strings).
import fc from 'fast-check';
import { visible } from './headers.js';

/**
 * Paths after `/v1/operations/`, with the key each names (undefined: none a tenant could
 * have): `own` keys of the tenant asking, encoded, and `slashKey` as is; `others` of
 * another tenant; random and malformed ones.
 */
export function keyPathCase({ own, others, slashKey }: { own: string[]; others: string[]; slashKey: string }) {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...own).map((key) => ({ key, path: encodeURIComponent(key) })) },
    { weight: 1, arbitrary: fc.constant({ key: slashKey, path: slashKey }) },
    { weight: 2, arbitrary: fc.constantFrom(...others).map((key) => ({ key, path: encodeURIComponent(key) })) },
    {
      weight: 3,
      arbitrary: fc
        .oneof(visible(1, 300), fc.string({ unit: 'grapheme', maxLength: 20 }))
        .map((key) => ({ key, path: encodeURIComponent(key) })),
    },
    {
      weight: 3,
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            '',
            '%',
            '%zz',
            '%C3%28',
            '%FF',
            '%00',
            '%2e%2e',
            '..',
            '.',
            '//',
            '%2F',
            'a%2',
            '?',
            '#x',
            ';',
            '%E2%82',
            '%ED%A0%80',
            'x'.repeat(2000),
          ),
          fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b.filter((x) => x > 0x20 && x !== 0x7f)).toString('latin1')),
        )
        .map((path) => ({ key: undefined, path })),
    },
  );
}

const queryName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('status', 'type', 'limit', 'cursor') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const queryValue = fc.oneof(
  fc.constantFrom(
    'processing',
    'succeeded',
    'failed',
    'payment',
    'checkout',
    '1',
    '50',
    '100',
    '101',
    '0',
    '07',
    '-1',
    '1e1',
    '',
    'Processing',
    'AAAA',
    'a'.repeat(9000),
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
export const queryCase = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(fc.tuple(queryName, queryValue), { maxLength: 3 }).map((pairs) => ({
      pairs: pairs as Array<[string, string]>,
      query: pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&'),
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '%',
          '%zz',
          'status=%E0%A4',
          'limit=%00',
          '&&=',
          '=',
          'status',
          'a[b]=c',
          'status[]=failed',
          'limit=1&limit=2',
          '__proto__=x',
          'constructor[prototype]=1',
        ),
        fc
          .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 })
          .map((s) => s.replace(/#/g, '')),
      )
      .map((query) => ({ pairs: undefined, query })),
  },
);
