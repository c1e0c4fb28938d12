// Test harness for the sandbox reservation service: a real SQLite file in a fresh temp
// dir and the real app listening on 127.0.0.1, port 0, spoken to with fetch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { expect } from 'vitest';
import { buildApp, type ReservationsDeps } from '../../downstream/reservations/app.js';
import { openDatabase } from '../../downstream/shared/db.js';
import type { SandboxApp } from '../../downstream/shared/http.js';
import { caller, listenOnLoopback, sandboxKey, type Answer, type Call } from '../support/sandbox-harness.js';

export { expectProblem, manualClock, sleep, type Answer } from '../support/sandbox-harness.js';

export interface Stock {
  sku: string;
  available: number;
  held: number;
}

export interface ReservationRow {
  status: string;
  reservation_id: string | null;
  decline_code: string | null;
}

export interface Reservations {
  url: string;
  app: SandboxApp;
  db: Database.Database;
  dbPath: string;
  close(): Promise<void>;
  /** JSON request; `key` sets Idempotency-Key (as is, so tests can send bad ones). */
  call: Call;
  hold(key: string, body: unknown): Promise<Answer>;
  confirm(key: string): Promise<Answer>;
  release(key: string): Promise<Answer>;
  view(key: string): Promise<Answer>;
  /** GET /inventory/{sku}: the service's own answer, due holds counted as given back. */
  stock(sku: string): Promise<Stock>;
  /** A fresh SKU with this much available, so tests never share stock. */
  newSku(available: number): Promise<string>;
  /** Ledger rows for a key, oldest first. */
  rows(key: string): ReservationRow[];
  keyRows(key: string): number;
  putFaults(faults: Record<string, unknown>): Promise<Answer>;
}

export async function startReservations(
  opts: Partial<Omit<ReservationsDeps, 'db'>> & { busyTimeoutMs?: number; dir?: string } = {},
): Promise<Reservations> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'retrysafe-rsv-'));
  const dbPath = join(dir, 'reservations.db');
  const db = openDatabase(dbPath, { busyTimeoutMs: opts.busyTimeoutMs ?? 5000 });
  const { dir: _dir, busyTimeoutMs: _busy, ...deps } = opts;
  const app = buildApp({ faults: false, keyTtlMs: 7 * 24 * 3600_000, seed: true, ...deps, db });
  const url = await listenOnLoopback(app);
  const call = caller(url);

  const stock = async (sku: string): Promise<Stock> => {
    const res = await call('GET', `/inventory/${encodeURIComponent(sku)}`);
    expect(res.status, res.text).toBe(200);
    return res.body as unknown as Stock;
  };

  return {
    url,
    app,
    db,
    dbPath,
    call,
    hold: (key, body) => call('POST', '/reservations', { key, body }),
    confirm: (key) => call('POST', `/reservations/${encodeURIComponent(key)}/confirm`),
    release: (key) => call('POST', `/reservations/${encodeURIComponent(key)}/release`),
    view: (key) => call('GET', `/reservations/${encodeURIComponent(key)}`),
    stock,
    newSku: async (available) => {
      const sku = `sku_${randomUUID().slice(0, 8)}`;
      const res = await call('PUT', `/inventory/${sku}`, { body: { available } });
      expect(res.status, res.text).toBe(200);
      return sku;
    },
    rows: (key) =>
      db
        .prepare('SELECT status, reservation_id, decline_code FROM reservations WHERE key = ? ORDER BY seq')
        .all(key) as ReservationRow[],
    keyRows: (key) => (db.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?').get(key) as { n: number }).n,
    putFaults: (faults) => call('PUT', '/_faults', { body: faults }),
    close: async () => {
      await app.close();
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const uniqueKey = (step = 'reserve'): string => sandboxKey(step);

/** The network-level failure a client sees, or undefined when an answer came back. */
export async function networkError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? String(err);
  }
}
