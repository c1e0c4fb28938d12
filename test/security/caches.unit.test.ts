// The API's caches are bounded in bytes, not only in entries: a resource's size depends on
// what a tenant sent (a description, a key) and on its definition, so RETRYSAFE_CACHE_SIZE
// alone (up to 10 M entries) would bound nothing. Past the byte bound the least recently
// used entries go; an entry larger than the whole bound is not kept at all.
import { describe, expect, it } from 'vitest';
import { entryBytes, OutcomeCache } from '../../client/api/engine/outcome-cache.js';
import { toOperation } from '../../common/resource.js';

function finished(key: string, description: string) {
  const operation = toOperation(
    {
      workflowId: `acme/${key}`,
      status: { name: 'COMPLETED' },
      startTime: new Date(0),
      closeTime: new Date(1),
      memo: { type: 'payment', key },
    },
    { status: 'succeeded', result: { chargeId: 'ch_1' }, steps: [] },
    { namespace: 'default' },
  );
  return { claim: { type: 'payment', fingerprint: 'f'.repeat(64), request: { description } }, operation };
}

describe('the outcome cache', () => {
  it('keeps no more bytes than its bound, however many entries it may hold, dropping the oldest first', () => {
    const cache = new OutcomeCache(1_000_000, 60_000, 64 * 1024);
    const big = 'd'.repeat(8 * 1024);
    for (let i = 0; i < 40; i++) {
      const { claim, operation } = finished(`k-${i}`, big);
      cache.remember(`acme/k-${i}`, claim, operation);
    }
    const kept = Array.from({ length: 40 }, (_, i) => cache.get(`acme/k-${i}`) !== undefined);
    const count = kept.filter(Boolean).length;
    const one = finished('k-0', big);
    expect(count).toBeGreaterThan(0);
    expect(count * entryBytes('acme/k-0', { ...one.claim, operation: one.operation })).toBeLessThanOrEqual(64 * 1024);
    // The newest are the ones kept.
    expect(kept.slice(40 - count).every(Boolean)).toBe(true);
    expect(kept[0]).toBe(false);
  });

  it('does not keep an entry larger than its whole bound, and evicts nothing for it', () => {
    const cache = new OutcomeCache(1_000, 60_000, 16 * 1024);
    const small = finished('small', 'ok');
    cache.remember('acme/small', small.claim, small.operation);
    const huge = finished('huge', 'h'.repeat(32 * 1024));
    cache.remember('acme/huge', huge.claim, huge.operation);
    expect(cache.get('acme/huge')).toBeUndefined();
    expect(cache.get('acme/small')?.operation.key).toBe('small');
  });

  it('counts what an entry holds in UTF-8 bytes', () => {
    expect(entryBytes('k', { d: 'é' })).toBe(entryBytes('k', { d: 'ee' }));
    expect(entryBytes('k', { d: '😀' })).toBe(entryBytes('k', { d: 'eeee' }));
  });
});
