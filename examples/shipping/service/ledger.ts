// The shipping service's ledger: one row per key, a shipment that was booked (`created`,
// later perhaps `cancelled`) or a tombstone (`fenced`) left by a cancel that came first.
// Outcomes are told as domain results; the routes (app.ts) decide how each is answered.
// `create` runs inside the idempotency transaction of its request, so the row and the
// stored answer commit together; `cancel` is idempotent by the row's state.
import { randomBytes } from 'node:crypto';
import type { Database } from 'retrysafe-server/keyed-service';

export type ShipmentStatus = 'created' | 'cancelled' | 'fenced';

export interface ShipmentRequest {
  recipient: string;
  country: string;
  postcode: string;
}

/** A booked shipment, as its creation was answered. */
export interface Shipment extends ShipmentRequest {
  id: string;
  key: string;
  trackingNumber: string;
  status: 'created';
  createdAt: string;
}

/** What the ledger holds under a key (a tombstone has no shipment's fields). */
export interface ShipmentView {
  key: string;
  shipmentId: string | null;
  recipient: string | null;
  country: string | null;
  postcode: string | null;
  trackingNumber: string | null;
  status: ShipmentStatus;
  createdAt: string;
  cancelledAt: string | null;
}

export type CreateOutcome =
  | { kind: 'created'; shipment: Shipment }
  /** A cancel under this key came first: the shipment must never be booked. */
  | { kind: 'fenced' }
  | { kind: 'destination_not_served'; country: string }
  /** The key's idempotency record expired (KEY_TTL) but its row remains: a key books one shipment for good. */
  | { kind: 'key_used' };

/** Where parcels go. A real service would read this from its carrier contracts. */
export const SERVED_COUNTRIES: ReadonlySet<string> = new Set(['AT', 'BE', 'DE', 'ES', 'FR', 'IE', 'IT', 'LU', 'NL', 'PT']);

export class ShipmentLedger {
  private readonly select: Database.Statement<[string], ShipmentView>;
  private readonly insert: Database.Statement<
    [string, string | null, string | null, string | null, string | null, string | null, ShipmentStatus, string]
  >;
  private readonly markCancelled: Database.Statement<[string, string]>;
  private readonly cancelTx: Database.Transaction<(key: string, now: string) => { view: ShipmentView; changed: boolean }>;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS shipments (
        key             TEXT PRIMARY KEY,
        shipment_id     TEXT UNIQUE,
        recipient       TEXT,
        country         TEXT,
        postcode        TEXT,
        tracking_number TEXT,
        status          TEXT NOT NULL CHECK (status IN ('created', 'cancelled', 'fenced')),
        created_at      TEXT NOT NULL,
        cancelled_at    TEXT
      ) WITHOUT ROWID;
    `);
    this.select = db.prepare(
      `SELECT key, shipment_id AS shipmentId, recipient, country, postcode, tracking_number AS trackingNumber,
              status, created_at AS createdAt, cancelled_at AS cancelledAt
         FROM shipments WHERE key = ?`,
    );
    this.insert = db.prepare(
      `INSERT INTO shipments (key, shipment_id, recipient, country, postcode, tracking_number, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.markCancelled = db.prepare(`UPDATE shipments SET status = 'cancelled', cancelled_at = ? WHERE key = ?`);
    this.cancelTx = db.transaction((key: string, now: string) => {
      const row = this.select.get(key);
      if (!row) {
        // Nothing booked yet: leave a tombstone, so a create that is still on its way is refused.
        this.insert.run(key, null, null, null, null, null, 'fenced', now);
        return { view: this.select.get(key)!, changed: true };
      }
      if (row.status !== 'created') return { view: row, changed: false };
      this.markCancelled.run(now, key);
      return { view: this.select.get(key)!, changed: true };
    });
  }

  /** Books the shipment under `key`; call it inside the request's idempotency transaction. */
  create(key: string, req: ShipmentRequest, now: string): CreateOutcome {
    const row = this.select.get(key);
    if (row?.status === 'fenced') return { kind: 'fenced' };
    if (row) return { kind: 'key_used' };
    if (!SERVED_COUNTRIES.has(req.country)) return { kind: 'destination_not_served', country: req.country };
    const shipment: Shipment = {
      id: `sh_${randomBytes(8).toString('hex')}`,
      key,
      ...req,
      trackingNumber: `TRK${randomBytes(5).toString('hex').toUpperCase()}`,
      status: 'created',
      createdAt: now,
    };
    this.insert.run(key, shipment.id, req.recipient, req.country, req.postcode, shipment.trackingNumber, 'created', now);
    return { kind: 'created', shipment };
  }

  /** Cancels the shipment under `key`, or fences the key when none was booked; a repeat changes nothing. */
  cancel(key: string, now: string): { view: ShipmentView; changed: boolean } {
    return this.cancelTx.immediate(key, now);
  }

  get(key: string): ShipmentView | undefined {
    return this.select.get(key);
  }
}
