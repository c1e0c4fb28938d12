// Test harness for the sandbox bank: a real SQLite file in a fresh temp dir and the real
// app listening on 127.0.0.1, port 0, spoken to with fetch.
import { randomUUID } from 'node:crypto';
import { buildApp, type BankDeps } from '../../downstream/bank/app.js';
import { sandboxKey, startSandboxService, useSandbox } from '../support/sandbox-harness.js';
import type { Answer, SandboxUnderTest, ServiceOptions } from '../support/sandbox-harness.js';

export { expectProblem, LOST_ANSWER, networkError, type Answer } from '../support/sandbox-harness.js';

/** The bank's two keyed movements of money, by their collection's name. */
export type Collection = 'charges' | 'credits';
const ID_COLUMN: Record<Collection, string> = { charges: 'charge_id', credits: 'credit_id' };

export interface LedgerRow {
  status: string;
  amount: number | null;
  /** The movement's id (`ch_…`, `cr_…`); null when none was made. */
  id: string | null;
}

export interface Bank extends SandboxUnderTest {
  charge(key: string, body: unknown): Promise<Answer>;
  credit(key: string, body: unknown): Promise<Answer>;
  /** POST /charges/{key}/reverse or /credits/{key}/reverse, the key percent-encoded. */
  reverse(collection: Collection, key: string): Promise<Answer>;
  balance(account: string): number;
  /** Opens an account with a fresh id; returns the id. */
  openAccount(balance: number, currency?: string): Promise<string>;
  /** The ledger rows of charges (or credits) under a key, oldest first. */
  rows(collection: Collection, key: string): LedgerRow[];
}

export async function startBank(opts: ServiceOptions<BankDeps> = {}): Promise<Bank> {
  const bank = await startSandboxService('bank', buildApp, opts);
  const { db, call } = bank;
  return {
    ...bank,
    charge: (key, body) => call('POST', '/charges', { key, body }),
    credit: (key, body) => call('POST', '/credits', { key, body }),
    reverse: (collection, key) => call('POST', `/${collection}/${encodeURIComponent(key)}/reverse`),
    balance: (account) =>
      (db.prepare('SELECT balance FROM accounts WHERE id = ?').get(account) as { balance: number } | undefined)?.balance ?? NaN,
    openAccount: async (balance, currency = 'EUR') => {
      const id = `acc_${randomUUID()}`;
      const res = await call('POST', '/accounts', { body: { id, currency, balance } });
      if (res.status !== 201) throw new Error(`could not open ${id}: ${res.text}`);
      return id;
    },
    rows: (collection, key) =>
      db
        .prepare(`SELECT status, amount, ${ID_COLUMN[collection]} AS id FROM ${collection} WHERE key = ? ORDER BY seq`)
        .all(key) as LedgerRow[],
  };
}

export const useBank = (opts?: ServiceOptions<BankDeps>): Bank => useSandbox('the bank', () => startBank(opts));

export const uniqueKey = (step = 'charge'): string => sandboxKey(step);

export function path(key: string): string {
  return encodeURIComponent(key);
}
