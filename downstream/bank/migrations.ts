// The bank's tables. Rows of `charges` are never deleted: a captured charge, a declined one
// and a tombstone (`fenced`, a reversal that arrived before its charge) are all kept, so
// GET /charges/{key} and the reversal can tell what happened long after the idempotency
// key itself has expired. Idempotent: run at every start.
import type Database from 'better-sqlite3';

export function migrate(db: Database.Database): void {
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
  `);
}
