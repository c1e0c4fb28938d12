// The API key check compares in constant time: both sides are hashed to 32 bytes and
// compared with crypto.timingSafeEqual against every configured key, whether the
// presented key matches the first one, the last one or none, and whatever its length.
import * as crypto from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createAuthenticator } from '../../client/api/auth.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const compare = vi.mocked(crypto.timingSafeEqual);
const keys = [
  { secret: 'sk_first_0123456789', tenant: 'first' },
  { secret: 'sk_second_0123456789abcdef', tenant: 'second' },
  { secret: 'sk_third_0123456789abcdefghijklmnop', tenant: 'third' },
];
const auth = createAuthenticator(keys);

beforeEach(() => {
  compare.mockClear();
});

describe('API key comparison', () => {
  it.each([
    ['the first key', `Bearer ${keys[0]!.secret}`, 'first'],
    ['the last key', `Bearer ${keys[2]!.secret}`, 'third'],
    ['a wrong key of the same length as one', `Bearer ${keys[1]!.secret.replace(/f$/, 'e')}`, undefined],
    ['a wrong key of another length', 'Bearer sk_x', undefined],
    ['a 10 000-character key', `Bearer ${'k'.repeat(10_000)}`, undefined],
  ])('compares %s against every configured key, 32 bytes each time', (_name, header, tenant) => {
    expect(auth.tenantFor(header)).toBe(tenant);
    expect(compare).toHaveBeenCalledTimes(keys.length);
    for (const [a, b] of compare.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
  });

  it('refuses without comparing when there is no bearer token at all', () => {
    expect(auth.tenantFor(undefined)).toBeUndefined();
    expect(auth.tenantFor('Basic abc')).toBeUndefined();
  });
});
