import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint, requestDifferences } from '../../client/api/fingerprint.js';

describe('fingerprint', () => {
  const request = { account: 'acc_alice', amount: 1250, currency: 'EUR' };

  it('is the SHA-256 hex of the canonical JSON of {type, request}', () => {
    const canonical = '{"request":{"account":"acc_alice","amount":1250,"currency":"EUR"},"type":"payment"}';
    expect(canonicalJson({ type: 'payment', request })).toBe(canonical);
    expect(fingerprint('payment', request)).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('does not depend on key order, at any depth', () => {
    const a = { account: 'a', amount: 1, currency: 'EUR', items: [{ sku: 's', quantity: 2 }] };
    const b = { items: [{ quantity: 2, sku: 's' }], currency: 'EUR', amount: 1, account: 'a' };
    expect(fingerprint('checkout', a)).toBe(fingerprint('checkout', b));
  });

  it('changes with the type, any value, a present description, or the item order', () => {
    const base = fingerprint('checkout', { ...request, items: [{ sku: 'a', quantity: 1 }, { sku: 'b', quantity: 1 }] });
    expect(fingerprint('payment', request)).not.toBe(fingerprint('checkout', request));
    expect(fingerprint('payment', { ...request, amount: 1251 })).not.toBe(fingerprint('payment', request));
    expect(fingerprint('payment', { ...request, description: '' })).not.toBe(fingerprint('payment', request));
    expect(fingerprint('checkout', { ...request, items: [{ sku: 'b', quantity: 1 }, { sku: 'a', quantity: 1 }] })).not.toBe(base);
  });
});

describe('requestDifferences', () => {
  const claimed = { type: 'payment', request: { account: 'acc_alice', amount: 1250, currency: 'EUR' } };

  it('is empty for the same request in another key order', () => {
    expect(requestDifferences(claimed, { type: 'payment', request: { currency: 'EUR', amount: 1250, account: 'acc_alice' } })).toEqual([]);
  });

  it('names each differing top-level field, sorted', () => {
    expect(
      requestDifferences(claimed, { type: 'payment', request: { account: 'acc_bob', amount: 1, currency: 'EUR' } }),
    ).toEqual(['account', 'amount']);
  });

  it('names a field present on one side only', () => {
    expect(
      requestDifferences(claimed, { type: 'payment', request: { ...claimed.request, description: 'x' } }),
    ).toEqual(['description']);
  });

  it('names type first when the operation type differs', () => {
    expect(
      requestDifferences(claimed, {
        type: 'checkout',
        request: { ...claimed.request, items: [{ sku: 'sku_book', quantity: 1 }] },
      }),
    ).toEqual(['type', 'items']);
  });

  it('compares nested values canonically', () => {
    const a = { type: 'checkout', request: { items: [{ sku: 's', quantity: 1 }] } };
    expect(requestDifferences(a, { type: 'checkout', request: { items: [{ quantity: 1, sku: 's' }] } })).toEqual([]);
    expect(requestDifferences(a, { type: 'checkout', request: { items: [{ sku: 's', quantity: 2 }] } })).toEqual(['items']);
  });
});
