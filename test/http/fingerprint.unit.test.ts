import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf } from '../../common/http/fingerprint.js';

describe('canonical fingerprint', () => {
  it('sorts keys at every depth, keeps array order, and drops undefined members', () => {
    expect(canonicalJson({ b: [{ y: 1, x: 2 }, 3], a: 'é', c: undefined })).toBe('{"a":"é","b":[{"x":2,"y":1},3]}');
  });

  it('spells numbers one way (1.0 and 1 are the same request)', () => {
    expect(canonicalJson(JSON.parse('{"n":1.0,"m":1e2}'))).toBe('{"m":100,"n":1}');
  });

  it('is the hex SHA-256 of the canonical JSON, unchanged across releases', () => {
    const value = { type: 'payment', request: { account: 'acc_alice', amount: 1250, currency: 'EUR' } };
    expect(fingerprintOf(value)).toBe(createHash('sha256').update(canonicalJson(value)).digest('hex'));
    expect(fingerprintOf(value)).toBe('012ec7fce5655b2f6fe8d65136003857d991f43c746076b4b6a9a7b524212d8c');
  });

  it('refuses a value with no JSON form', () => {
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });
});
