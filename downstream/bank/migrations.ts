// The bank's tables. Rows of `charges` and `credits` are never deleted: an entry that moved
// money, a declined one and a tombstone (`fenced`, a reversal that arrived before its
// entry) are all kept, so GET /charges/{key}, GET /credits/{key} and the reversals can
// tell what happened long after the idempotency key itself has expired.
//
// Each step runs once per database file, in order, and `user_version` records how many
// have run; a bank.db written before steps were counted is at 0, and the first step (the
// original schema, IF NOT EXISTS throughout) finds its tables already there.
import type Database from 'better-sqlite3';

const STEPS: ReadonlyArray<(db: Database.Database) => void> = [
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
