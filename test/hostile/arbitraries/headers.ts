// Generators of the request headers the hostile properties send: Idempotency-Key values
// (valid ones mostly from a small pool, so most valid requests are replays; the rest every
// way a key can be malformed, as raw bytes) and Prefer headers.
import fc from 'fast-check';

const visibleChar = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
export const visible = (min: number, max: number) => fc.string({ unit: visibleChar, minLength: min, maxLength: max });
const sfEscape = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
const noCrLf = (bytes: Uint8Array) => Buffer.from(bytes.filter((b) => b !== 0x0a && b !== 0x0d));

/**
 * Valid keys mostly come from a small pool, sent bare or quoted, so that most valid
 * requests are replays: each fresh key is a workflow start (~0.1-0.4 s on 2 cores).
 */
export const KEY_POOL = [
  'a',
  'K',
  '"q"',
  'back\\slash',
  'a/b',
  '../x',
  '%2F',
  '?#&=;,',
  "~!@$^*()[]{}|`'",
  'x'.repeat(254),
  'y'.repeat(255),
  'order-42',
];
const poolKey = fc.constantFrom(...KEY_POOL).chain((k) => fc.constantFrom(k, sfEscape(k), ` ${k}\t`, `\t${sfEscape(k)} `));

/** Idempotency-Key values as raw header bytes; undefined sends no header at all. */
export const keyHeader: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 8, arbitrary: poolKey.map((s) => Buffer.from(s, 'latin1')) },
  { weight: 1, arbitrary: visible(1, 40).map((s) => Buffer.from(s, 'latin1')) },
  {
    weight: 3,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 })
      .map((s) => Buffer.from(`"${s}`, 'latin1')),
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 40 })
      .filter((s) => s.includes(' '))
      .map((s) => Buffer.from(sfEscape(s), 'latin1')),
  },
  {
    weight: 2,
    arbitrary: visible(256, 600)
      .chain((s) => fc.constantFrom(s, sfEscape(s)))
      .map((s) => Buffer.from(s, 'latin1')),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 30 }).map(noCrLf) },
  {
    weight: 2,
    arbitrary: fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.concat([Buffer.from('"'), noCrLf(b), Buffer.from('"')])),
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 20 })
      .filter((s) => /[^\x21-\x7e]/.test(s))
      .map((s) => Buffer.from(s, 'utf8')),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        visible(1, 12),
        fc.constantFrom(
          '"%s',
          '"%s";p=1',
          '"%s";a',
          '"%s\\q"',
          '"%s" x',
          '"%s\\"',
          '%s %s',
          '\xa0%s',
          '%s\xa0',
          '"%s\t"',
          '%s\t%s',
          '"%s"\x85',
          '\u00e9%s',
        ),
      )
      .map(([s, shape]) => Buffer.from(shape.replaceAll('%s', s), 'latin1')),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      undefined,
      Buffer.from(''),
      Buffer.from('   '),
      Buffer.from('""'),
      Buffer.from('"'),
      Buffer.from('\t'),
      Buffer.from('.'),
      Buffer.from('..'),
      Buffer.from('"."'),
      Buffer.from(' ".." '),
      Buffer.from('...'),
    ),
  },
);

const preferMember = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom('wait', 'Wait', 'WAIT'),
        fc.oneof(
          fc.integer({ min: 0, max: 70 }).map(String),
          fc.constantFrom('007', '060', '061', '99999999999999999999', '-1', '1.5', '', '"5"', '"61"', '"x"', '1e1', 'ten'),
        ),
      )
      .map(([name, value]) => ({ name, value: value === '' ? undefined : value })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      { name: 'respond-async' },
      { name: 'return', value: 'minimal' },
      { name: 'handling', value: 'strict' },
      { name: 'x-custom', value: '"a,b;c"' },
    ),
  },
);
export const preferCase = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.array(preferMember, { minLength: 1, maxLength: 3 }), fc.constantFrom(', ', ',', ' ,  '), fc.boolean())
      .map(([members, sep, params]) => ({
        members,
        header: members.map((m) => `${m.name}${m.value === undefined ? '' : `=${m.value}`}${params ? ';p=1' : ''}`).join(sep),
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 40 })
      .map((header) => ({ members: undefined, header })),
  },
);
