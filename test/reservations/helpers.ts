// Test harness for the sandbox reservation service: a real SQLite file in a fresh temp
// dir and the real app listening on 127.0.0.1, port 0, spoken to with fetch.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { buildApp, type ReservationsDeps } from '../../downstream/reservations/app.js';
import { sandboxKey, startSandboxService, useSandbox } from '../support/sandbox-harness.js';
import type { Answer, SandboxUnderTest, ServiceOptions } from '../support/sandbox-harness.js';

export { expectProblem, LOST_ANSWER, manualClock, networkError, type Answer } from '../support/sandbox-harness.js';

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

export interface Reservations extends SandboxUnderTest {
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
}

export async function startReservations(opts: ServiceOptions<ReservationsDeps> = {}): Promise<Reservations> {
  const service = await startSandboxService('reservations', buildApp, opts);
  const { db, call } = service;

  const stock = async (sku: string): Promise<Stock> => {
    const res = await call('GET', `/inventory/${encodeURIComponent(sku)}`);
    expect(res.status, res.text).toBe(200);
    return res.body as unknown as Stock;
  };

  return {
    ...service,
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
  };
}

export const useReservations = (opts?: ServiceOptions<ReservationsDeps>): Reservations =>
  useSandbox('the reservation service', () => startReservations(opts));

export const uniqueKey = (step = 'reserve'): string => sandboxKey(step);
