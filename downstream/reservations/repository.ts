// The reservation service's SQL, one prepared statement per question or change. No
// transaction here: the ledger decides which statements belong to one.
import type Database from 'better-sqlite3';

export interface Stock {
  sku: string;
  available: number;
  held: number;
}

export type ReservationStatus = 'held' | 'confirmed' | 'released' | 'expired' | 'fenced' | 'declined';

export interface ReservationRow {
  seq: number;
  key: string;
  reservation_id: string | null;
  status: ReservationStatus;
  items: string;
  decline_code: string | null;
  created_at: string;
  expires_at: string | null;
  expires_at_ms: number | null;
  confirmed_at: string | null;
  released_at: string | null;
}

/** What a reservation takes from one SKU. */
export interface Line {
  sku: string;
  quantity: number;
}

export interface NewReservation {
  key: string;
  reservationId: string | null;
  status: ReservationStatus;
  /** The request's items as JSON, as the client sent them. */
  items: string;
  declineCode: string | null;
  createdAt: string;
  expiresAt: string | null;
  expiresAtMs: number | null;
}

export function reservationRepository(db: Database.Database) {
  const countSkus = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM inventory');
  const stock = db.prepare<[string], Stock>('SELECT sku, available, held FROM inventory WHERE sku = ?');
  const setAvailable = db.prepare<[string, number]>(
    `INSERT INTO inventory (sku, available, held) VALUES (?, ?, 0)
     ON CONFLICT (sku) DO UPDATE SET available = excluded.available`,
  );
  // available += `give`, held += `hold`: every stock movement is one of these.
  const move = db.prepare<[number, number, string]>(
    'UPDATE inventory SET available = available + ?, held = held + ? WHERE sku = ?',
  );
  const dueForSku = db.prepare<[string, number], { q: number | null }>(
    `SELECT sum(l.quantity) AS q FROM reservation_lines l JOIN reservations r ON r.seq = l.reservation_seq
     WHERE l.sku = ? AND r.status = 'held' AND r.expires_at_ms <= ?`,
  );
  const giveBackDue = db.prepare<[number]>(
    `UPDATE inventory SET available = available + due.q, held = held - due.q
     FROM (SELECT l.sku, sum(l.quantity) AS q FROM reservation_lines l JOIN reservations r ON r.seq = l.reservation_seq
           WHERE r.status = 'held' AND r.expires_at_ms <= ? GROUP BY l.sku) AS due
     WHERE inventory.sku = due.sku`,
  );
  const markDueExpired = db.prepare<[number]>(
    `UPDATE reservations SET status = 'expired' WHERE status = 'held' AND expires_at_ms <= ?`,
  );
  // A key may carry several rows once its idempotency record expired and it was used
  // again; the latest one is the key's current state.
  const latest = db.prepare<[string], ReservationRow>('SELECT * FROM reservations WHERE key = ? ORDER BY seq DESC LIMIT 1');
  const lines = db.prepare<[number], Line>('SELECT sku, quantity FROM reservation_lines WHERE reservation_seq = ?');
  const insert = db.prepare<
    [string, string | null, ReservationStatus, string, string | null, string, string | null, number | null]
  >(
    `INSERT INTO reservations (key, reservation_id, status, items, decline_code, created_at, expires_at, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertLine = db.prepare<[number | bigint, string, number]>(
    'INSERT INTO reservation_lines (reservation_seq, sku, quantity) VALUES (?, ?, ?)',
  );
  const markConfirmed = db.prepare<[string, number]>(
    `UPDATE reservations SET status = 'confirmed', confirmed_at = ? WHERE seq = ?`,
  );
  const markReleased = db.prepare<[string, number]>(`UPDATE reservations SET status = 'released', released_at = ? WHERE seq = ?`);

  return {
    countSkus: (): number => countSkus.get()!.n,
    stock: (sku: string): Stock | undefined => stock.get(sku),
    setAvailable: (sku: string, available: number): void => void setAvailable.run(sku, available),
    /** available += `give`, held += `hold`. */
    move: (sku: string, give: number, hold: number): void => void move.run(give, hold, sku),
    /** Quantity of `sku` in holds due at `nowMs` but not yet expired by a write. */
    dueForSku: (sku: string, nowMs: number): number => dueForSku.get(sku, nowMs)?.q ?? 0,
    /** Gives back the stock of every hold due at `nowMs` and marks them expired; how many. */
    expireDue: (nowMs: number): number => {
      giveBackDue.run(nowMs);
      return markDueExpired.run(nowMs).changes;
    },
    latest: (key: string): ReservationRow | undefined => latest.get(key),
    lines: (seq: number): Line[] => lines.all(seq),
    /** The new row's seq. */
    insert: (r: NewReservation): number | bigint =>
      insert.run(r.key, r.reservationId, r.status, r.items, r.declineCode, r.createdAt, r.expiresAt, r.expiresAtMs)
        .lastInsertRowid,
    insertLine: (seq: number | bigint, line: Line): void => void insertLine.run(seq, line.sku, line.quantity),
    markConfirmed: (seq: number, at: string): void => void markConfirmed.run(at, seq),
    markReleased: (seq: number, at: string): void => void markReleased.run(at, seq),
  };
}

export type ReservationRepository = ReturnType<typeof reservationRepository>;
