// The reservation service's tables. Rows of `reservations` are never deleted: a hold, a
// declined attempt and a tombstone (`fenced`, a release that arrived before its hold) are
// all kept, so confirm and release can tell what happened long after the idempotency key
// expired. Idempotent: run at every start.
import type Database from 'better-sqlite3';

export function migrate(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS inventory (
      sku       TEXT PRIMARY KEY,
      available INTEGER NOT NULL CHECK (available >= 0),
      held      INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS reservations (
      seq            INTEGER PRIMARY KEY AUTOINCREMENT,
      key            TEXT NOT NULL,
      reservation_id TEXT UNIQUE,
      status         TEXT NOT NULL
                     CHECK (status IN ('held', 'confirmed', 'released', 'expired', 'fenced', 'declined')),
      items          TEXT NOT NULL,
      decline_code   TEXT,
      created_at     TEXT NOT NULL,
      expires_at     TEXT,
      expires_at_ms  INTEGER,
      confirmed_at   TEXT,
      released_at    TEXT
    );
    CREATE INDEX IF NOT EXISTS reservations_key ON reservations (key, seq);
    CREATE INDEX IF NOT EXISTS reservations_due ON reservations (expires_at_ms) WHERE status = 'held';
    -- What a reservation takes from each SKU, one line per SKU (duplicates in the request
    -- are summed): the unit in which stock moves on hold, confirm, release and expiry.
    CREATE TABLE IF NOT EXISTS reservation_lines (
      reservation_seq INTEGER NOT NULL REFERENCES reservations (seq),
      sku             TEXT NOT NULL,
      quantity        INTEGER NOT NULL CHECK (quantity > 0),
      PRIMARY KEY (reservation_seq, sku)
    ) WITHOUT ROWID;
  `);
}
