// The reservation service's ledger: what a hold, a confirm, a release and the passing of
// time do to stock, told as domain outcomes (held, out of stock, expired, ...); the routes
// decide how each is answered over HTTP. Stock moves in three counters' worth of states:
// `available` (can still be reserved), `held` (in active, unconfirmed holds) and,
// implicitly, taken by confirmed reservations.
//
// Holds expire. Every write transaction first expires the holds that are due, giving their
// stock back, and a periodic sweep does the same; reads never write (they must not wait
// for the write lock), so they add the stock of holds that are due but not yet swept.
// Either way a reader and a writer at the same instant see the same numbers.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { migrate } from './migrations.js';
import {
  reservationRepository,
  type Line,
  type ReservationRepository,
  type ReservationRow,
  type ReservationStatus,
  type Stock,
} from './repository.js';

export type { ReservationStatus, Stock } from './repository.js';

export const DEFAULT_HOLD_TTL_SECONDS = 900;

export interface Item {
  sku: string;
  quantity: number;
}

export interface HoldRequest {
  items: Item[];
  ttlSeconds: number;
}

/** A hold that took stock. */
export interface HeldReservation {
  id: string;
  key: string;
  items: Item[];
  status: 'held';
  expiresAt: string;
  createdAt: string;
}

/** What the ledger knows about the latest reservation under a key. */
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

/** Where a reservation stands after a confirm or a release. */
export interface ReservationState {
  key: string;
  reservationId: string | null;
  status: ReservationStatus;
}

export interface Shortage {
  sku: string;
  requested: number;
  available: number;
}

export type HoldOutcome =
  | { kind: 'held'; reservation: HeldReservation }
  /** A release fenced the key before this hold arrived: it is never held. */
  | { kind: 'fenced' }
  | { kind: 'unknown_sku'; skus: string[] }
  | { kind: 'out_of_stock'; shortages: Shortage[] };

/** What a confirm or a release decided; `changed` tells whether this call committed anything. */
export type Transition =
  | { kind: 'ok'; state: ReservationState; changed: boolean }
  | { kind: 'not_found'; key: string; changed: false }
  | { kind: 'expired'; key: string; expiresAt: string | null; changed: boolean }
  | { kind: 'released'; key: string; changed: false }
  | { kind: 'declined'; key: string; declineCode: string | null; changed: false };

export const DEMO_STOCK: readonly { sku: string; available: number }[] = [
  { sku: 'sku_book', available: 100 },
  { sku: 'sku_pen', available: 1000 },
  { sku: 'sku_rare', available: 1 },
];

export class ReservationLedger {
  private readonly repo: ReservationRepository;
  private readonly tx;

  constructor(
    db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db);
    this.repo = reservationRepository(db);
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
        if (this.repo.countSkus() > 0) return false;
        for (const s of DEMO_STOCK) this.repo.setAvailable(s.sku, s.available);
        return true;
      }),
      setAvailable: write((sku: string, available: number): Stock => {
        // Due holds first: their stock must not come back on top of the value just set.
        this.repo.expireDue(this.now());
        this.repo.setAvailable(sku, available);
        return this.repo.stock(sku)!;
      }),
      stock: read((sku: string) => this.stockAt(sku, this.now())),
      reservation: read((key: string) => {
        const row = this.repo.latest(key);
        return row && toView(row, this.now());
      }),
      confirm: write((key: string) => this.confirmInTx(key)),
      release: write((key: string) => this.releaseInTx(key)),
      sweep: write(() => this.repo.expireDue(this.now())),
    };
  }

  /** Stocks the demo SKUs on first start only, so a restart never resets the inventory. */
  seedIfEmpty(): boolean {
    return this.tx.seed();
  }

  /** What can still be reserved from now on; holds are untouched. */
  setAvailable(sku: string, available: number): Stock {
    return this.tx.setAvailable(sku, available);
  }

  getStock(sku: string): Stock | undefined {
    return this.tx.stock(sku);
  }

  getReservation(key: string): ReservationView | undefined {
    return this.tx.reservation(key);
  }

  /** Expires the holds that are due, in its own transaction; returns how many. */
  sweep(): number {
    return this.tx.sweep();
  }

  /**
   * Holds the items under `key`; call inside the request's idempotency transaction. All or
   * nothing: one short item holds none. A refusal leaves a `declined` row, so a later
   * release knows there is nothing to give back.
   */
  hold(key: string, req: HoldRequest): HoldOutcome {
    const nowMs = this.now();
    this.repo.expireDue(nowMs);
    const createdAt = iso(nowMs);
    if (this.repo.latest(key)?.status === 'fenced') return { kind: 'fenced' };
    const items = JSON.stringify(req.items);
    const decline = <O extends HoldOutcome>(outcome: O): O => {
      this.repo.insert({
        key,
        reservationId: null,
        status: 'declined',
        items,
        declineCode: outcome.kind,
        createdAt,
        expiresAt: null,
        expiresAtMs: null,
      });
      return outcome;
    };

    const lines = sumBySku(req.items);
    const stock = lines.map((line) => ({ line, stock: this.repo.stock(line.sku) }));
    const unknown = stock.filter((s) => !s.stock).map((s) => s.line.sku);
    if (unknown.length > 0) return decline({ kind: 'unknown_sku', skus: unknown });
    const shortages = stock
      .filter((s) => s.stock!.available < s.line.quantity)
      .map((s) => ({ sku: s.line.sku, requested: s.line.quantity, available: s.stock!.available }));
    if (shortages.length > 0) return decline({ kind: 'out_of_stock', shortages });

    const id = `rsv_${randomBytes(12).toString('hex')}`;
    const expiresMs = nowMs + req.ttlSeconds * 1000;
    const expiresAt = iso(expiresMs);
    const seq = this.repo.insert({
      key,
      reservationId: id,
      status: 'held',
      items,
      declineCode: null,
      createdAt,
      expiresAt,
      expiresAtMs: expiresMs,
    });
    for (const line of lines) {
      this.repo.insertLine(seq, line);
      this.repo.move(line.sku, -line.quantity, line.quantity);
    }
    return { kind: 'held', reservation: { id, key, items: req.items, status: 'held', expiresAt, createdAt } };
  }

  /**
   * Confirms in one transaction, idempotent by state: a live hold becomes confirmed (its
   * stock stays taken, no longer held), a confirmed one answers the same, an expired one is
   * refused with its stock already back.
   */
  confirm(key: string): Transition {
    return this.tx.confirm(key);
  }

  /**
   * Releases in one transaction, idempotent by state: gives back the stock of a hold or of
   * a confirmed reservation once, answers the same afterwards, and fences a key that has no
   * reservation yet so the hold, should it still arrive, is refused.
   */
  release(key: string): Transition {
    return this.tx.release(key);
  }

  private confirmInTx(key: string): Transition {
    const nowMs = this.now();
    const before = this.repo.latest(key);
    this.repo.expireDue(nowMs);
    const row = this.repo.latest(key);
    if (!before || !row) return { kind: 'not_found', key, changed: false };
    switch (row.status) {
      case 'held':
        for (const line of this.repo.lines(row.seq)) this.repo.move(line.sku, 0, -line.quantity);
        this.repo.markConfirmed(row.seq, iso(nowMs));
        return { kind: 'ok', state: state(row, 'confirmed'), changed: true };
      case 'confirmed':
        return { kind: 'ok', state: state(row, 'confirmed'), changed: false };
      case 'expired':
        return { kind: 'expired', key, expiresAt: row.expires_at, changed: before.status !== row.status };
      case 'released':
      case 'fenced':
        return { kind: 'released', key, changed: false };
      case 'declined':
        return { kind: 'declined', key, declineCode: row.decline_code, changed: false };
    }
  }

  private releaseInTx(key: string): Transition {
    const nowMs = this.now();
    const before = this.repo.latest(key);
    this.repo.expireDue(nowMs);
    const row = this.repo.latest(key);
    if (!before || !row) {
      this.repo.insert({
        key,
        reservationId: null,
        status: 'fenced',
        items: '[]',
        declineCode: null,
        createdAt: iso(nowMs),
        expiresAt: null,
        expiresAtMs: null,
      });
      return { kind: 'ok', state: { key, reservationId: null, status: 'fenced' }, changed: true };
    }
    switch (row.status) {
      case 'held':
        for (const line of this.repo.lines(row.seq)) this.repo.move(line.sku, line.quantity, -line.quantity);
        this.repo.markReleased(row.seq, iso(nowMs));
        return { kind: 'ok', state: state(row, 'released'), changed: true };
      case 'confirmed':
        // A saga fences a confirm whose outcome it could not learn: undo it too.
        for (const line of this.repo.lines(row.seq)) this.repo.move(line.sku, line.quantity, 0);
        this.repo.markReleased(row.seq, iso(nowMs));
        return { kind: 'ok', state: state(row, 'released'), changed: true };
      case 'released':
      case 'expired':
      case 'declined':
      case 'fenced':
        return { kind: 'ok', state: state(row, row.status), changed: before.status !== row.status };
    }
  }

  /** A SKU's stock as of `nowMs`, counting due holds as given back (read-only). */
  private stockAt(sku: string, nowMs: number): Stock | undefined {
    const row = this.repo.stock(sku);
    if (!row) return undefined;
    const due = this.repo.dueForSku(sku, nowMs);
    return { sku: row.sku, available: row.available + due, held: row.held - due };
  }
}

function sumBySku(items: Item[]): Line[] {
  const totals = new Map<string, number>();
  for (const item of items) totals.set(item.sku, (totals.get(item.sku) ?? 0) + item.quantity);
  return [...totals].map(([sku, quantity]) => ({ sku, quantity }));
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
