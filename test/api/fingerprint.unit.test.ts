import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint, requestDifferences } from '../../client/api/fingerprint.js';
import { canonicalJson } from '../../common/http/fingerprint.js';

describe('fingerprint', () => {
  const request = { account: 'acc_alice', amount: 1250, currency: 'EUR' };

  it('is the SHA-256 hex of the canonical JSON of {type, request}', () => {
    const canonical = '{"request":{"account":"acc_alice","amount":1250,"currency":"EUR"},"type":"payment"}';
    expect(canonicalJson({ type: 'payment', request })).toBe(canonical);
    expect(fingerprint('payment', request)).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('keeps the hashes already stored in workflow memos', () => {
    expect(fingerprint('payment', request)).toBe('012ec7fce5655b2f6fe8d65136003857d991f43c746076b4b6a9a7b524212d8c');
    expect(
      fingerprint('checkout', {
        account: 'acc_alice',
        amount: 4200,
        currency: 'EUR',
        description: 'Café ☕ "quoted"',
        items: [{ sku: 'sku_book', quantity: 2 }],
      }),
    ).toBe('4298b2d7368f5cf93af93f6e82859f95df50eb665f7a63a329d07a3a9f6c2ba0');
  });

  it('does not depend on key order, at any depth', () => {
    const a = { account: 'a', amount: 1, currency: 'EUR', items: [{ sku: 's', quantity: 2 }] };
    const b = { items: [{ quantity: 2, sku: 's' }], currency: 'EUR', amount: 1, account: 'a' };
    expect(fingerprint('checkout', a)).toBe(fingerprint('checkout', b));
  });

  it('changes with the type, any value, a present description, or the item order', () => {
    const base = fingerprint('checkout', {
      ...request,
      items: [
        { sku: 'a', quantity: 1 },
        { sku: 'b', quantity: 1 },
      ],
    });
    expect(fingerprint('payment', request)).not.toBe(fingerprint('checkout', request));
    expect(fingerprint('payment', { ...request, amount: 1251 })).not.toBe(fingerprint('payment', request));
    expect(fingerprint('payment', { ...request, description: '' })).not.toBe(fingerprint('payment', request));
    expect(
      fingerprint('checkout', {
        ...request,
        items: [
          { sku: 'b', quantity: 1 },
          { sku: 'a', quantity: 1 },
        ],
      }),
    ).not.toBe(base);
  });
});

describe('requestDifferences', () => {
  const claimed = { type: 'payment', request: { account: 'acc_alice', amount: 1250, currency: 'EUR' } };

  it('is empty for the same request in another key order', () => {
    expect(
      requestDifferences(claimed, { type: 'payment', request: { currency: 'EUR', amount: 1250, account: 'acc_alice' } }),
    ).toEqual([]);
  });

  it('names each differing top-level field, sorted', () => {
    expect(requestDifferences(claimed, { type: 'payment', request: { account: 'acc_bob', amount: 1, currency: 'EUR' } })).toEqual(
      ['account', 'amount'],
    );
  });

  it('names a field present on one side only', () => {
    expect(requestDifferences(claimed, { type: 'payment', request: { ...claimed.request, description: 'x' } })).toEqual([
      'description',
    ]);
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
