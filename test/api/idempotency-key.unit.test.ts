import { describe, expect, it } from 'vitest';
import { isValidKey, parseClientKey } from '../../client/api/idempotency-key.js';

const key = (header: string | string[] | undefined) => parseClientKey(header);

describe('Idempotency-Key parsing (the API: 1-255 visible ASCII)', () => {
  it('reads the bare form', () => {
    expect(key('8e03978e-40d5-43e8-bc93-6894a57f9324')).toEqual({ ok: true, key: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
  });

  it('reads the structured-field string form as the same key as the bare form', () => {
    expect(key('"order-42"')).toEqual({ ok: true, key: 'order-42' });
    expect(key('"order-42"')).toEqual(key('order-42'));
  });

  it('unescapes \\" and \\\\ inside a quoted key', () => {
    expect(key('"a\\"b\\\\c"')).toEqual({ ok: true, key: 'a"b\\c' });
  });

  it('keeps characters that are only special in structured fields when the key is bare', () => {
    expect(key('acme/order;v=1')).toEqual({ ok: true, key: 'acme/order;v=1' });
  });

  it('ignores whitespace around the value', () => {
    expect(key('  "k1"  ')).toEqual({ ok: true, key: 'k1' });
  });

  it.each([undefined, '', '   '])('reports %j as missing', (header) => {
    expect(key(header)).toMatchObject({ ok: false, code: 'idempotency_key_missing' });
  });

  it('accepts 255 characters, bare and quoted', () => {
    const k = 'k'.repeat(255);
    expect(key(k)).toEqual({ ok: true, key: k });
    expect(key(`"${k}"`)).toEqual({ ok: true, key: k });
  });

  it.each([
    ['an empty quoted string', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['256 characters, quoted', `"${'k'.repeat(256)}"`],
    ['non-ASCII', 'clé-42'],
    ['non-ASCII, quoted', '"clé-42"'],
    ['an inner space', 'order 42'],
    ['an inner space, quoted', '"order 42"'],
    ['a control character', 'order\u000142'],
    ['a tab inside', 'order\t42'],
    ['DEL', 'order\u007f'],
    ['an unterminated quoted string', '"order-42'],
    ['a quoted string with parameters', '"order-42";v=1'],
    ['a bad escape', '"a\\x"'],
    ['two comma-joined headers', 'a, b'],
  ])('refuses %s as invalid', (_name, header) => {
    expect(key(header)).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
  });

  it('refuses two separate headers', () => {
    expect(key(['a', 'b'])).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
  });
});

describe('keys from a URL path', () => {
  it('accept 1-255 visible ASCII characters, and nothing else', () => {
    expect(isValidKey('order/42')).toBe(true);
    expect(isValidKey('k'.repeat(255))).toBe(true);
    expect(isValidKey('')).toBe(false);
    expect(isValidKey('k'.repeat(256))).toBe(false);
    expect(isValidKey('order 42')).toBe(false);
    expect(isValidKey('clé')).toBe(false);
  });
});
