import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { IdempotentExecutor } from '../../downstream/shared/idempotency.js';
import { openDatabase } from '../../downstream/shared/db.js';
import { useTempDirs, withService } from '../support/sandbox-harness.js';
import { startBank, uniqueKey } from './helpers.js';

const tempDir = useTempDirs('bank');

describe('idempotency key TTL', () => {
  it('purges expired keys; the key may then be used again while the ledger keeps the old charge', () =>
    withService(startBank({ keyTtlMs: 3_000 }), async (bank) => {
      const key = uniqueKey();
      const first = await bank.charge(key, { account: 'acc_alice', amount: 100, currency: 'EUR' });
      expect(first.status).toBe(201);
      expect((await bank.charge(key, { account: 'acc_alice', amount: 200, currency: 'EUR' })).status).toBe(422);

      // The timer purges it, not just the lookup: wait for the row to go.
      await vi.waitFor(() => expect(bank.keyRows(key)).toBe(0), { timeout: 15_000, interval: 50 });

      const reused = await bank.charge(key, { account: 'acc_alice', amount: 200, currency: 'EUR' });
      expect(reused.status).toBe(201);
      expect(reused.headers.get('idempotent-replayed')).toBe('false');
      expect(reused.body.id).not.toBe(first.body.id);
      expect(bank.rows('charges', key).map((r) => r.amount)).toEqual([100, 200]);
      expect(bank.balance('acc_alice')).toBe(1_000_000 - 300);
    }));

  it('a tombstone outlives its key: the late original is still refused after the purge', () =>
    withService(startBank({ keyTtlMs: 200 }), async (bank) => {
      const key = uniqueKey();
      await bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);
      expect((await bank.charge(key, { account: 'acc_alice', amount: 100, currency: 'EUR' })).status).toBe(410);
      // The timer purges it, not just the lookup: wait for the row to go.
      await vi.waitFor(() => expect(bank.keyRows(key)).toBe(0), { timeout: 15_000, interval: 50 });
      expect((await bank.charge(key, { account: 'acc_alice', amount: 100, currency: 'EUR' })).status).toBe(410);
      expect(bank.balance('acc_alice')).toBe(1_000_000);
    }));

  it('purges once at start, before the first tick', async () => {
    const dir = tempDir();
    const key = uniqueKey();
    const before = await startBank({ dir });
    await before.charge(key, { account: 'acc_alice', amount: 1, currency: 'EUR' });
    before.db.prepare('UPDATE idempotency_keys SET created_at = created_at - 120000 WHERE key = ?').run(key);
    await before.close();

    // A one-minute TTL: the periodic purge would first run after 6 s.
    await withService(startBank({ dir, keyTtlMs: 60_000 }), async (after) => {
      expect(after.keyRows(key)).toBe(0);
      expect(after.rows('charges', key)).toHaveLength(1);
    });
  });

  it('an expired key that the timer has not purged yet is already free', async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'x.db'));
    let now = 1_000_000;
    const executor = new IdempotentExecutor(db, { ttlMs: 1_000, now: () => now });
    const run = (body: unknown) =>
      executor.execute({ key: 'k', endpoint: 'POST /x', body, effect: () => ({ status: 201, body: { body } }) });

    expect((await run({ a: 1 })).replayed).toBe(false);
    now += 999;
    await expect(run({ a: 2 })).rejects.toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect((await run({ a: 1 })).replayed).toBe(true);
    now += 1;
    const fresh = await run({ a: 2 });
    expect(fresh.replayed).toBe(false);
    expect(JSON.parse(fresh.payload)).toEqual({ body: { a: 2 } });
    db.close();
  });
});
