// One parser, two sides: the API (client keys, 1-255 visible ASCII, an empty header is no
// key) and the sandboxes (derived keys up to 512, an sf-string may hold a space, an empty
// header is a malformed key).
import { describe, expect, it } from 'vitest';
import { CLIENT_KEY_RULES } from '../../client/api/idempotency-key.js';
import { checkKey, parseIdempotencyKey, type KeyRules } from '../../common/http/idempotency-key.js';
import { DOWNSTREAM_KEY_RULES } from '../../downstream/shared/idempotency-key.js';

const client = (header: string | string[] | undefined) => parseIdempotencyKey(header, CLIENT_KEY_RULES);
const downstream = (header: string | string[] | undefined) => parseIdempotencyKey(header, DOWNSTREAM_KEY_RULES);

describe('parseIdempotencyKey', () => {
  it('reads the bare and the sf-string form as the same key, on both sides', () => {
    for (const parse of [client, downstream]) {
      expect(parse('acme/order-42/charge')).toEqual({ ok: true, key: 'acme/order-42/charge' });
      expect(parse('"acme/order-42/charge"')).toEqual(parse('acme/order-42/charge'));
    }
  });

  it("bounds the length by the side's rule", () => {
    expect(client('k'.repeat(255))).toMatchObject({ ok: true });
    expect(client('k'.repeat(256))).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
    expect(downstream('k'.repeat(512))).toMatchObject({ ok: true });
    expect(downstream(`"${'k'.repeat(512)}"`)).toMatchObject({ ok: true });
    expect(downstream('k'.repeat(513))).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
    const tiny: KeyRules = { maxLength: 3, spaces: false, empty: 'missing' };
    expect(parseIdempotencyKey('abcd', tiny)).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
  });

  it('lets only the sandboxes take a space, and only inside an sf-string', () => {
    expect(downstream('"a b"')).toEqual({ ok: true, key: 'a b' });
    expect(client('"a b"')).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
    expect(downstream('a b')).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
  });

  it('reads an empty header as no key for the API, as a malformed one for the sandboxes', () => {
    expect(client('  ')).toMatchObject({ ok: false, code: 'idempotency_key_missing' });
    expect(downstream('  ')).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
    expect(client(undefined)).toMatchObject({ ok: false, code: 'idempotency_key_missing' });
    expect(downstream(undefined)).toMatchObject({ ok: false, code: 'idempotency_key_missing' });
  });

  it('refuses two headers, parameters and non-ASCII on both sides', () => {
    for (const parse of [client, downstream]) {
      for (const header of [['a', 'b'], 'a, b', '"a";v=1', 'clé', '"clé"', '\u00a0abc']) {
        expect(parse(header), JSON.stringify(header)).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
      }
    }
  });
});

describe('checkKey (a key from a URL path)', () => {
  it('applies the same alphabet and length as the header', () => {
    expect(checkKey('a b', DOWNSTREAM_KEY_RULES)).toEqual({ ok: true, key: 'a b' });
    expect(checkKey('a b', CLIENT_KEY_RULES)).toMatchObject({ ok: false });
    expect(checkKey('', DOWNSTREAM_KEY_RULES)).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
  });
});
