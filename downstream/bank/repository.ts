// The bank's SQL, one prepared statement per question or change. No transaction here: the
// ledger decides which statements belong to one.
import type Database from 'better-sqlite3';

export interface Account {
  id: string;
  currency: string;
  balance: number;
}

export type ChargeStatus = 'captured' | 'reversed' | 'fenced' | 'declined';

export interface ChargeRow {
  seq: number;
  key: string;
  charge_id: string | null;
  account: string | null;
  amount: number | null;
  currency: string | null;
  status: ChargeStatus;
  decline_code: string | null;
  created_at: string;
  reversed_at: string | null;
}

export interface NewCharge {
  key: string;
  chargeId: string | null;
  account: string | null;
  amount: number | null;
  currency: string | null;
  status: ChargeStatus;
  declineCode: string | null;
  createdAt: string;
}

export function bankRepository(db: Database.Database) {
  const countAccounts = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM accounts');
  const getAccount = db.prepare<[string], Account>('SELECT id, currency, balance FROM accounts WHERE id = ?');
  const upsertAccount = db.prepare<[string, string, number]>(
    `INSERT INTO accounts (id, currency, balance) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET currency = excluded.currency, balance = excluded.balance`,
  );
  const addToBalance = db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?');
  // A key may carry several rows once its idempotency record expired and it was used
  // again; the latest one is the key's current state.
  const latestCharge = db.prepare<[string], ChargeRow>('SELECT * FROM charges WHERE key = ? ORDER BY seq DESC LIMIT 1');
  const insertCharge = db.prepare<
    [string, string | null, string | null, number | null, string | null, ChargeStatus, string | null, string]
  >(
    `INSERT INTO charges (key, charge_id, account, amount, currency, status, decline_code, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const markReversed = db.prepare<[string, number]>(`UPDATE charges SET status = 'reversed', reversed_at = ? WHERE seq = ?`);

  return {
    countAccounts: (): number => countAccounts.get()!.n,
    getAccount: (id: string): Account | undefined => getAccount.get(id),
    upsertAccount: (a: Account): void => void upsertAccount.run(a.id, a.currency, a.balance),
    addToBalance: (account: string, delta: number): void => void addToBalance.run(delta, account),
    latestCharge: (key: string): ChargeRow | undefined => latestCharge.get(key),
    insertCharge: (c: NewCharge): void =>
      void insertCharge.run(c.key, c.chargeId, c.account, c.amount, c.currency, c.status, c.declineCode, c.createdAt),
    markReversed: (seq: number, at: string): void => void markReversed.run(at, seq),
  };
}

export type BankRepository = ReturnType<typeof bankRepository>;
