// Test harness for the sandbox bank: a real SQLite file in a fresh temp dir and the real
// app listening on 127.0.0.1, port 0, spoken to with fetch.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { buildApp, type BankDeps } from '../../downstream/bank/app.js';
import { openDatabase } from '../../downstream/shared/db.js';
import type { SandboxApp } from '../../downstream/shared/http.js';
import { caller, listenOnLoopback, sandboxKey, type Answer, type Call } from '../support/sandbox-harness.js';

export { expectProblem, sleep, type Answer } from '../support/sandbox-harness.js';

export interface Bank {
  url: string;
  app: SandboxApp;
  db: Database.Database;
  dbPath: string;
  close(): Promise<void>;
  /** JSON request; `key` sets Idempotency-Key (as is, so tests can send bad ones). */
  call: Call;
  charge(key: string, body: unknown): Promise<Answer>;
  credit(key: string, body: unknown): Promise<Answer>;
  /** POST /charges/{key}/reverse or /credits/{key}/reverse, the key percent-encoded. */
  reverse(kind: 'charges' | 'credits', key: string): Promise<Answer>;
  balance(account: string): number;
  /** Opens an account with a fresh id; returns the id. */
  openAccount(balance: number, currency?: string): Promise<string>;
  /** Ledger rows for a key, oldest first. */
  chargeRows(key: string): { status: string; amount: number | null; charge_id: string | null }[];
  creditRows(key: string): { status: string; amount: number | null; credit_id: string | null }[];
  keyRows(key: string): number;
  putFaults(faults: Record<string, unknown>): Promise<Answer>;
}

export async function startBank(
  opts: Partial<Omit<BankDeps, 'db'>> & { busyTimeoutMs?: number; dir?: string } = {},
): Promise<Bank> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'retrysafe-bank-'));
  const dbPath = join(dir, 'bank.db');
  const db = openDatabase(dbPath, { busyTimeoutMs: opts.busyTimeoutMs ?? 5000 });
  const app = buildApp({
    db,
    faults: opts.faults ?? false,
    keyTtlMs: opts.keyTtlMs ?? 7 * 24 * 3600_000,
    seed: opts.seed ?? true,
    ...(opts.random ? { random: opts.random } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const url = await listenOnLoopback(app);
  const call = caller(url);

  return {
    url,
    app,
    db,
    dbPath,
    call,
    charge: (key, body) => call('POST', '/charges', { key, body }),
    credit: (key, body) => call('POST', '/credits', { key, body }),
    reverse: (kind, key) => call('POST', `/${kind}/${encodeURIComponent(key)}/reverse`),
    balance: (account) =>
      (db.prepare('SELECT balance FROM accounts WHERE id = ?').get(account) as { balance: number } | undefined)?.balance ?? NaN,
    openAccount: async (balance, currency = 'EUR') => {
      const id = `acc_${randomUUID()}`;
      const res = await call('POST', '/accounts', { body: { id, currency, balance } });
      if (res.status !== 201) throw new Error(`could not open ${id}: ${res.text}`);
      return id;
    },
    chargeRows: (key) =>
      db.prepare('SELECT status, amount, charge_id FROM charges WHERE key = ? ORDER BY seq').all(key) as {
        status: string;
        amount: number | null;
        charge_id: string | null;
      }[],
    creditRows: (key) =>
      db.prepare('SELECT status, amount, credit_id FROM credits WHERE key = ? ORDER BY seq').all(key) as {
        status: string;
        amount: number | null;
        credit_id: string | null;
      }[],
    keyRows: (key) => (db.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?').get(key) as { n: number }).n,
    putFaults: (faults) => call('PUT', '/_faults', { body: faults }),
    close: async () => {
      await app.close();
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const uniqueKey = (step = 'charge'): string => sandboxKey(step);

export function path(key: string): string {
  return encodeURIComponent(key);
}
