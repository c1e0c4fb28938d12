// The reservation service's ledger in SQLite: stock per SKU and one row per reservation
// attempt, keyed by the caller's idempotency key. Stock moves in three counters' worth of
// states: `available` (can still be reserved), `held` (in active, unconfirmed holds) and,
// implicitly, taken by confirmed reservations. Rows are never deleted: a hold, a declined
// attempt and a tombstone (`fenced`, a release that arrived before its hold) are all kept,
// so confirm and release can tell what happened long after the idempotency key expired.
//
// Holds expire. Every write transaction first expires the holds that are due, giving their
// stock back, and a periodic sweep does the same; reads never write (they must not wait
// for the write lock), so they add the stock of holds that are due but not yet swept.
// Either way a reader and a writer at the same instant see the same numbers.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { EffectResponse } from '../shared/idempotency.js';
import { problemBody } from '../shared/problem.js';

export interface Item {
  sku: string;
  quantity: number;
}

export interface HoldRequest {
  items: Item[];
  ttlSeconds: number;
}

export interface Stock {
  sku: string;
  available: number;
  held: number;
}

export type ReservationStatus = 'held' | 'confirmed' | 'released' | 'expired' | 'fenced' | 'declined';

/** The 201 body of POST /reservations. */
export interface HeldReservation {
  id: string;
  key: string;
  items: Item[];
  status: 'held';
  expiresAt: string;
  createdAt: string;
}

/** GET /reservations/{key}: what the ledger knows about the latest reservation under a key. */
export interface ReservationView {
  key: string;
  reservationId: string | null;
  items: Item[];
  status: ReservationStatus;
  expiresAt: string | null;
  createdAt: string;
  confirmedAt: string | null;
  releasedAt: string | null;
}

/** The 200 body of confirm and release. */
export interface ReservationState {
  key: string;
  reservationId: string | null;
  status: ReservationStatus;
}

/** What confirm or release decided; `changed` tells whether this call committed anything. */
export type Transition =
  | { ok: true; state: ReservationState; changed: boolean }
  | { ok: false; status: number; code: string; detail: string; changed: boolean };

interface ReservationRow {
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

interface Line {
  sku: string;
  quantity: number;
}

export const DEFAULT_HOLD_TTL_SECONDS = 900;

export const DEMO_STOCK: readonly { sku: string; available: number }[] = [
  { sku: 'sku_book', available: 100 },
  { sku: 'sku_pen', available: 1000 },
  { sku: 'sku_rare', available: 1 },
];

export class ReservationStore {
  private readonly q;
  private readonly tx;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
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
    this.q = {
      countSkus: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM inventory'),
      stock: db.prepare<[string], Stock>('SELECT sku, available, held FROM inventory WHERE sku = ?'),
      setAvailable: db.prepare<[string, number]>(
        `INSERT INTO inventory (sku, available, held) VALUES (?, ?, 0)
         ON CONFLICT (sku) DO UPDATE SET available = excluded.available`,
      ),
      // available += `give`, held += `hold`: every stock movement is one of these.
      move: db.prepare<[number, number, string]>('UPDATE inventory SET available = available + ?, held = held + ? WHERE sku = ?'),
      dueForSku: db.prepare<[string, number], { q: number | null }>(
        `SELECT sum(l.quantity) AS q FROM reservation_lines l JOIN reservations r ON r.seq = l.reservation_seq
         WHERE l.sku = ? AND r.status = 'held' AND r.expires_at_ms <= ?`,
      ),
      giveBackDue: db.prepare<[number]>(
        `UPDATE inventory SET available = available + due.q, held = held - due.q
         FROM (SELECT l.sku, sum(l.quantity) AS q FROM reservation_lines l JOIN reservations r ON r.seq = l.reservation_seq
               WHERE r.status = 'held' AND r.expires_at_ms <= ? GROUP BY l.sku) AS due
         WHERE inventory.sku = due.sku`,
      ),
      markDueExpired: db.prepare<[number]>(`UPDATE reservations SET status = 'expired' WHERE status = 'held' AND expires_at_ms <= ?`),
      // A key may carry several rows once its idempotency record expired and it was used
      // again; the latest one is the key's current state.
      latest: db.prepare<[string], ReservationRow>('SELECT * FROM reservations WHERE key = ? ORDER BY seq DESC LIMIT 1'),
      lines: db.prepare<[number], Line>('SELECT sku, quantity FROM reservation_lines WHERE reservation_seq = ?'),
      insert: db.prepare<
        [string, string | null, ReservationStatus, string, string | null, string, string | null, number | null]
      >(
        `INSERT INTO reservations (key, reservation_id, status, items, decline_code, created_at, expires_at, expires_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertLine: db.prepare<[number | bigint, string, number]>(
        'INSERT INTO reservation_lines (reservation_seq, sku, quantity) VALUES (?, ?, ?)',
      ),
      markConfirmed: db.prepare<[string, number]>(`UPDATE reservations SET status = 'confirmed', confirmed_at = ? WHERE seq = ?`),
      markReleased: db.prepare<[string, number]>(`UPDATE reservations SET status = 'released', released_at = ? WHERE seq = ?`),
    };
    // IMMEDIATE takes the write lock at BEGIN, so the stock read and the stock written
    // belong to the same instant; reads are plain (deferred) snapshots and never wait.
    const write = <A extends unknown[], R>(fn: (...args: A) => R) => {
      const t = db.transaction(fn);
      return (...args: A): R => t.immediate(...args);
    };
    const read = <A extends unknown[], R>(fn: (...args: A) => R) => {
      const t = db.transaction(fn);
      return (...args: A): R => t.deferred(...args);
    };
    this.tx = {
      seed: write(() => {
        if (this.q.countSkus.get()!.n > 0) return false;
        for (const s of DEMO_STOCK) this.q.setAvailable.run(s.sku, s.available);
        return true;
      }),
      setAvailable: write((sku: string, available: number): Stock => {
        // Due holds first: their stock must not come back on top of the value just set.
        this.expireDue(this.now());
        this.q.setAvailable.run(sku, available);
        return this.q.stock.get(sku)!;
      }),
      stock: read((sku: string) => this.stockAt(sku, this.now())),
      reservation: read((key: string) => {
        const row = this.q.latest.get(key);
        return row && toView(row, this.now());
      }),
      confirm: write((key: string) => this.confirmInTx(key)),
      release: write((key: string) => this.releaseInTx(key)),
      sweep: write(() => this.expireDue(this.now())),
    };
  }

  /** Stocks the demo SKUs on first start only, so a restart never resets the inventory. */
  seedIfEmpty(): boolean {
    return this.tx.seed();
  }

  /** PUT /inventory/{sku}: what can still be reserved from now on; holds are untouched. */
  setAvailable(sku: string, available: number): Stock {
    return this.tx.setAvailable(sku, available);
  }

  getStock(sku: string): Stock | undefined {
    return this.tx.stock(sku);
  }

  getReservation(key: string): ReservationView | undefined {
    return this.tx.reservation(key);
  }

  /** Expires the holds that are due in its own transaction; returns how many. */
  sweep(): number {
    return this.tx.sweep();
  }

  /**
   * Expires due holds now and then (every `intervalMs`), so the ledger itself catches up
   * even when no request arrives. The timer is unref()ed; call the result to stop it.
   */
  startSweeping(intervalMs: number, onError: (err: unknown) => void = () => {}): () => void {
    const sweep = () => {
      try {
        this.sweep();
      } catch (err) {
        // A busy database or a closed one at shutdown: the next tick tries again.
        onError(err);
      }
    };
    sweep();
    const timer = setInterval(sweep, Math.max(1, Math.trunc(intervalMs)));
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * The effect of POST /reservations, run inside the idempotency transaction. Refusals are
   * answers (stored and replayed) and leave a `declined` row, so a later release knows
   * there is nothing to give back. All or nothing: one short item holds none.
   */
  hold(key: string, req: HoldRequest): EffectResponse {
    const nowMs = this.now();
    this.expireDue(nowMs);
    const createdAt = iso(nowMs);
    if (this.q.latest.get(key)?.status === 'fenced') {
      return refusal(
        410,
        'reservation_fenced',
        'this reservation was released before it arrived; it will never be held. Use a new key for a new reservation',
      );
    }
    const items = JSON.stringify(req.items);
    const decline = (code: string, detail: string, extensions: Record<string, unknown>): EffectResponse => {
      this.q.insert.run(key, null, 'declined', items, code, createdAt, null, null);
      return refusal(422, code, detail, extensions);
    };

    const lines = sumBySku(req.items);
    const stock = lines.map((line) => ({ line, stock: this.q.stock.get(line.sku) }));
    const unknown = stock.filter((s) => !s.stock).map((s) => s.line.sku);
    if (unknown.length > 0) {
      return decline('unknown_sku', `no such SKU: ${unknown.join(', ')}`, { skus: unknown });
    }
    const short = stock
      .filter((s) => s.stock!.available < s.line.quantity)
      .map((s) => ({ sku: s.line.sku, requested: s.line.quantity, available: s.stock!.available }));
    if (short.length > 0) {
      return decline(
        'out_of_stock',
        `not enough stock for ${short.map((s) => `${s.sku} (${s.requested} requested, ${s.available} available)`).join(', ')}; nothing was held`,
        { shortages: short },
      );
    }

    const id = `rsv_${randomBytes(12).toString('hex')}`;
    const expiresMs = nowMs + req.ttlSeconds * 1000;
    const expiresAt = iso(expiresMs);
    const seq = this.q.insert.run(key, id, 'held', items, null, createdAt, expiresAt, expiresMs).lastInsertRowid;
    for (const line of lines) {
      this.q.insertLine.run(seq, line.sku, line.quantity);
      this.q.move.run(-line.quantity, line.quantity, line.sku);
    }
    const body: HeldReservation = { id, key, items: req.items, status: 'held', expiresAt, createdAt };
    return { status: 201, body };
  }

  /**
   * POST /reservations/{key}/confirm in one transaction, idempotent by state: a live hold
   * becomes confirmed (its stock stays taken, no longer held), a confirmed one answers the
   * same, an expired one is refused with its stock already back.
   */
  confirm(key: string): Transition {
    return this.tx.confirm(key);
  }

  /**
   * POST /reservations/{key}/release in one transaction, idempotent by state: gives back
   * the stock of a hold or of a confirmed reservation once, answers the same afterwards,
   * and fences a key that has no reservation yet so the hold, should it still arrive, is
   * refused.
   */
  release(key: string): Transition {
    return this.tx.release(key);
  }

  private confirmInTx(key: string): Transition {
    const nowMs = this.now();
    const before = this.q.latest.get(key);
    this.expireDue(nowMs);
    const row = this.q.latest.get(key);
    if (!before || !row) return { ok: false, status: 404, code: 'reservation_not_found', detail: notFound(key), changed: false };
    const expiredNow = before.status !== row.status;
    switch (row.status) {
      case 'held':
        for (const line of this.q.lines.all(row.seq)) this.q.move.run(0, -line.quantity, line.sku);
        this.q.markConfirmed.run(iso(nowMs), row.seq);
        return { ok: true, state: state(row, 'confirmed'), changed: true };
      case 'confirmed':
        return { ok: true, state: state(row, 'confirmed'), changed: false };
      case 'expired':
        return {
          ok: false,
          status: 422,
          code: 'reservation_expired',
          detail: `the hold under key ${key} expired at ${row.expires_at ?? '?'}; its stock was given back`,
          changed: expiredNow,
        };
      case 'released':
      case 'fenced':
        return {
          ok: false,
          status: 422,
          code: 'reservation_released',
          detail: `the reservation under key ${key} was released; it can no longer be confirmed`,
          changed: false,
        };
      case 'declined':
        return {
          ok: false,
          status: 422,
          code: 'reservation_declined',
          detail: `the reservation under key ${key} was declined (${row.decline_code ?? 'refused'}); nothing is held`,
          changed: false,
        };
    }
  }

  private releaseInTx(key: string): Transition {
    const nowMs = this.now();
    const before = this.q.latest.get(key);
    this.expireDue(nowMs);
    const row = this.q.latest.get(key);
    if (!before || !row) {
      this.q.insert.run(key, null, 'fenced', '[]', null, iso(nowMs), null, null);
      return { ok: true, state: { key, reservationId: null, status: 'fenced' }, changed: true };
    }
    switch (row.status) {
      case 'held':
        for (const line of this.q.lines.all(row.seq)) this.q.move.run(line.quantity, -line.quantity, line.sku);
        this.q.markReleased.run(iso(nowMs), row.seq);
        return { ok: true, state: state(row, 'released'), changed: true };
      case 'confirmed':
        // A saga fences a confirm whose outcome it could not learn: undo it too.
        for (const line of this.q.lines.all(row.seq)) this.q.move.run(line.quantity, 0, line.sku);
        this.q.markReleased.run(iso(nowMs), row.seq);
        return { ok: true, state: state(row, 'released'), changed: true };
      case 'released':
      case 'expired':
      case 'declined':
      case 'fenced':
        return { ok: true, state: state(row, row.status), changed: before.status !== row.status };
    }
  }

  /** Gives back the stock of every hold due at `nowMs`; call inside a write transaction. */
  private expireDue(nowMs: number): number {
    this.q.giveBackDue.run(nowMs);
    return this.q.markDueExpired.run(nowMs).changes;
  }

  /** A SKU's stock as of `nowMs`, counting due holds as given back (read-only). */
  private stockAt(sku: string, nowMs: number): Stock | undefined {
    const row = this.q.stock.get(sku);
    if (!row) return undefined;
    const due = this.q.dueForSku.get(sku, nowMs)?.q ?? 0;
    return { sku: row.sku, available: row.available + due, held: row.held - due };
  }
}

function sumBySku(items: Item[]): Line[] {
  const totals = new Map<string, number>();
  for (const item of items) totals.set(item.sku, (totals.get(item.sku) ?? 0) + item.quantity);
  return [...totals].map(([sku, quantity]) => ({ sku, quantity }));
}

function refusal(status: number, code: string, detail: string, extensions: Record<string, unknown> = {}): EffectResponse {
  return { status, body: problemBody(status, code, detail, extensions) };
}

function notFound(key: string): string {
  return `no reservation has been made or fenced under key ${key}`;
}

function state(row: ReservationRow, status: ReservationStatus): ReservationState {
  return { key: row.key, reservationId: row.reservation_id, status };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function toView(row: ReservationRow, nowMs: number): ReservationView {
  const due = row.status === 'held' && row.expires_at_ms !== null && row.expires_at_ms <= nowMs;
  return {
    key: row.key,
    reservationId: row.reservation_id,
    items: JSON.parse(row.items) as Item[],
    status: due ? 'expired' : row.status,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    confirmedAt: row.confirmed_at,
    releasedAt: row.released_at,
  };
}
