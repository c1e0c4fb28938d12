// The bank's tables. Rows of `charges` and `credits` are never deleted: an entry that moved
// money, a declined one and a tombstone (`fenced`, a reversal that arrived before its
// entry) are all kept, so GET /charges/{key}, GET /credits/{key} and the reversals can
// tell what happened long after the idempotency key itself has expired.
//
// Each step runs once per database file, in order, and `user_version` records how many
// have run; a bank.db written before steps were counted is at 0, and the first step (the
// original schema, IF NOT EXISTS throughout) finds its tables already there.
import type Database from 'better-sqlite3';

/**
 * The steps, oldest first. A step that has shipped is never edited: files it wrote exist
 * (the tests build a first-build file from the first one).
 */
export const STEPS: ReadonlyArray<(db: Database.Database) => void> = [
  // 1. Accounts and charges.
  (db) =>
    db.exec(`
      CREATE TABLE IF NOT EXISTS accounts (
        id       TEXT PRIMARY KEY,
        currency TEXT NOT NULL,
        balance  INTEGER NOT NULL CHECK (balance >= 0)
      );
      CREATE TABLE IF NOT EXISTS charges (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        key          TEXT NOT NULL,
        charge_id    TEXT UNIQUE,
        account      TEXT,
        amount       INTEGER,
        currency     TEXT,
        status       TEXT NOT NULL CHECK (status IN ('captured', 'reversed', 'fenced', 'declined')),
        decline_code TEXT,
        created_at   TEXT NOT NULL,
        reversed_at  TEXT
      );
      CREATE INDEX IF NOT EXISTS charges_key ON charges (key, seq);
    `),
  // 2. Credits. A credit's reversal claws the money back even when the account has spent
  //    it since, so a balance may now go below zero: the CHECK goes, which in SQLite means
  //    rebuilding the table. Charges still never overdraw (the ledger declines them).
  (db) =>
    db.exec(`
      CREATE TABLE accounts_rebuilt (
        id       TEXT PRIMARY KEY,
        currency TEXT NOT NULL,
        balance  INTEGER NOT NULL
      );
      INSERT INTO accounts_rebuilt (id, currency, balance) SELECT id, currency, balance FROM accounts;
      DROP TABLE accounts;
      ALTER TABLE accounts_rebuilt RENAME TO accounts;

      CREATE TABLE credits (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        key          TEXT NOT NULL,
        credit_id    TEXT UNIQUE,
        account      TEXT,
        amount       INTEGER,
        currency     TEXT,
        status       TEXT NOT NULL CHECK (status IN ('credited', 'reversed', 'fenced', 'declined')),
        decline_code TEXT,
        created_at   TEXT NOT NULL,
        reversed_at  TEXT
      );
      CREATE INDEX credits_key ON credits (key, seq);
    `),
  // 3. One entry that moved money per use of a key, enforced by the database itself, so
  //    that not even a bug in the idempotency layer (an effect run twice, a key forgotten
  //    early, the effect and the stored answer committed apart) can move money twice under
  //    one key. A key is used again only once its idempotency record has expired
  //    (KEY_TTL); `key_use` counts those uses, 1 for the first. Declines and tombstones
  //    move nothing and stay outside the index, so fences and reversals work as before.
  //    Rows already there are numbered in order: several entries that moved money under
  //    one key can only be earlier uses, since nothing refused a duplicate until now.
  (db) => {
    for (const [table, idColumn] of [
      ['charges', 'charge_id'],
      ['credits', 'credit_id'],
    ] as const) {
      db.exec(`
        ALTER TABLE ${table} ADD COLUMN key_use INTEGER NOT NULL DEFAULT 1 CHECK (key_use >= 1);
        UPDATE ${table} SET key_use = (
          SELECT count(*) FROM ${table} AS earlier
          WHERE earlier.key = ${table}.key AND earlier.${idColumn} IS NOT NULL AND earlier.seq <= ${table}.seq
        )
        WHERE ${idColumn} IS NOT NULL;
        CREATE UNIQUE INDEX ${table}_moved_once_per_key_use ON ${table} (key, key_use) WHERE ${idColumn} IS NOT NULL;
      `);
    }
  },
];

/** Brings the file up to this build's schema; safe to call at every start, from several processes. */
export function migrate(db: Database.Database): void {
  // IMMEDIATE: two processes starting on one file take turns, and the second finds the
  // steps done.
  const run = db.transaction(() => {
    const done = db.pragma('user_version', { simple: true }) as number;
    if (done > STEPS.length) {
      throw new Error(
        `the bank database is at schema ${done}, newer than this build knows (${STEPS.length}); run a newer build or use another BANK_DB`,
      );
    }
    for (const step of STEPS.slice(done)) step(db);
    db.pragma(`user_version = ${STEPS.length}`);
  });
  run.immediate();
}

/** How many steps this build has; a migrated file's `user_version`. */
export const SCHEMA_VERSION = STEPS.length;
