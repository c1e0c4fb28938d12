// A bank.db written by an earlier build must keep working: its balances, its charges and
// its tombstones are still there and still answered, and the new parts of the schema are
// added around them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate, SCHEMA_VERSION, STEPS } from '../../downstream/bank/migrations.js';
import { openDatabase } from '../../downstream/shared/db.js';
import { useTempDirs } from '../support/sandbox-harness.js';
import { expectProblem, startBank, uniqueKey } from './helpers.js';

const tempDir = useTempDirs('bank-migrate');

/**
 * A first-build bank.db holding an account, a captured charge, a tombstone, and a key used
 * twice (its idempotency record expired in between): two charges under one key.
 */
function firstBuildFile(dir: string, keys: { captured: string; fenced: string; reused: string }): void {
  const db = openDatabase(join(dir, 'bank.db'));
  // The first build's schema is the first step, and it counted no schema version.
  STEPS[0]!(db);
  db.prepare(`INSERT INTO accounts VALUES ('acc_old', 'EUR', 700), ('acc_alice', 'EUR', 1000000)`).run();
  db.prepare(
    `INSERT INTO charges (key, charge_id, account, amount, currency, status, created_at)
     VALUES (?, 'ch_old', 'acc_old', 300, 'EUR', 'captured', '2020-01-01T00:00:00.000Z')`,
  ).run(keys.captured);
  db.prepare(`INSERT INTO charges (key, status, created_at) VALUES (?, 'fenced', '2020-01-01T00:00:01.000Z')`).run(keys.fenced);
  const reused = db.prepare(
    `INSERT INTO charges (key, charge_id, account, amount, currency, status, created_at)
     VALUES (?, ?, 'acc_alice', ?, 'EUR', 'captured', ?)`,
  );
  reused.run(keys.reused, 'ch_first_use', 10, '2020-01-01T00:00:00.000Z');
  db.prepare(
    `INSERT INTO charges (key, account, amount, currency, status, decline_code, created_at)
     VALUES (?, 'acc_alice', 10, 'USD', 'declined', 'currency_mismatch', '2020-01-09T00:00:00.000Z')`,
  ).run(keys.reused);
  reused.run(keys.reused, 'ch_second_use', 20, '2020-01-10T00:00:00.000Z');
  expect(db.pragma('user_version', { simple: true })).toBe(0);
  db.close();
}

describe('migrations', () => {
  it('a first-build bank.db keeps its balances, charges and fences, and gains credits that may overdraw', async () => {
    const dir = tempDir();
    const keys = { captured: uniqueKey(), fenced: uniqueKey(), reused: uniqueKey() };
    firstBuildFile(dir, keys);

    const bank = await startBank({ dir });
    try {
      expect(bank.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      // Not re-seeded: the file had accounts.
      expect((await bank.call('GET', '/accounts/acc_old')).body).toEqual({ id: 'acc_old', currency: 'EUR', balance: 700 });
      expect((await bank.call('GET', `/charges/${encodeURIComponent(keys.captured)}`)).body).toMatchObject({
        chargeId: 'ch_old',
        status: 'captured',
        amount: 300,
      });
      expectProblem(await bank.charge(keys.fenced, { account: 'acc_old', amount: 1, currency: 'EUR' }), 410, 'charge_fenced');
      expect((await bank.reverse('charges', keys.captured)).body).toMatchObject({ status: 'reversed', refunded: 300 });
      expect(bank.balance('acc_old')).toBe(1_000);

      const credit = uniqueKey('credit');
      expect((await bank.credit(credit, { account: 'acc_old', amount: 50, currency: 'EUR' })).status).toBe(201);
      expect((await bank.charge(uniqueKey(), { account: 'acc_old', amount: 1_050, currency: 'EUR' })).status).toBe(201);
      expect((await bank.reverse('credits', credit)).body).toMatchObject({ status: 'reversed', reclaimed: 50 });
      expect(bank.balance('acc_old')).toBe(-50);

      // The key used twice before: each use numbered, and the latest is what GET shows.
      expect(
        bank.db.prepare('SELECT charge_id AS id, key_use AS keyUse FROM charges WHERE key = ? ORDER BY seq').all(keys.reused),
      ).toEqual([
        { id: 'ch_first_use', keyUse: 1 },
        { id: null, keyUse: 1 },
        { id: 'ch_second_use', keyUse: 2 },
      ]);
      expect((await bank.call('GET', `/charges/${encodeURIComponent(keys.reused)}`)).body).toMatchObject({
        chargeId: 'ch_second_use',
      });
      // Used again today, long after its last use expired: a third use.
      const third = await bank.charge(keys.reused, { account: 'acc_alice', amount: 1, currency: 'EUR' });
      expect(third.status).toBe(201);
      expect(bank.db.prepare('SELECT max(key_use) AS n FROM charges WHERE key = ?').get(keys.reused)).toEqual({ n: 3 });
    } finally {
      await bank.close();
    }
  });

  it('runs each step once: a second start, and a second process on the same file, change nothing', async () => {
    const dir = tempDir();
    const first = await startBank({ dir });
    const key = uniqueKey('credit');
    await first.credit(key, { account: 'acc_bob', amount: 5, currency: 'EUR' });
    const other = openDatabase(first.dbPath);
    try {
      migrate(other);
      expect(other.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      other.close();
      await first.close();
    }

    const second = await startBank({ dir });
    try {
      expect(second.balance('acc_bob')).toBe(2_005);
      expect(second.rows('credits', key)).toHaveLength(1);
      expect(
        (await second.credit(key, { account: 'acc_bob', amount: 5, currency: 'EUR' })).headers.get('idempotent-replayed'),
      ).toBe('true');
    } finally {
      await second.close();
    }
  });

  it('refuses a file written by a newer build instead of guessing at its tables', () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'bank.db'));
    try {
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      expect(() => migrate(db)).toThrow(`the bank database is at schema ${SCHEMA_VERSION + 1}, newer than this build knows`);
      expect(db.prepare(`SELECT count(*) AS n FROM sqlite_schema WHERE name = 'credits'`).get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });
});
