// The bank's ledger in SQLite: accounts and one row per charge attempt, keyed by the
// caller's idempotency key. Rows are never deleted: a captured charge, a declined one and
// a tombstone (`fenced`, a reversal that arrived before its charge) are all kept, so
// GET /charges/{key} and the reversal can tell what happened long after the idempotency
// key itself has expired.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { EffectResponse } from '../shared/idempotency.js';
import { problemBody } from '../shared/problem.js';

export interface Account {
  id: string;
  currency: string;
  balance: number;
}

export type ChargeStatus = 'captured' | 'reversed' | 'fenced' | 'declined';

export interface ChargeRequest {
  account: string;
  amount: number;
  currency: string;
}

/** The 201 body of POST /charges. */
export interface CapturedCharge {
  id: string;
  key: string;
  account: string;
  amount: number;
  currency: string;
  status: 'captured';
  createdAt: string;
}

/** GET /charges/{key}: what the ledger knows about the latest charge under a key. */
export interface ChargeView {
  key: string;
  chargeId: string | null;
  account: string | null;
  amount: number | null;
  currency: string | null;
  status: ChargeStatus;
  createdAt: string;
  reversedAt: string | null;
}

export interface Reversal {
  key: string;
  chargeId: string | null;
  status: ChargeStatus;
  refunded: number;
}

interface ChargeRow {
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

export const DEMO_ACCOUNTS: readonly Account[] = [
  { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 },
  { id: 'acc_bob', currency: 'EUR', balance: 2_000 },
];

export class BankStore {
  private readonly q;
  private readonly reverseTx: (key: string) => { reversal: Reversal; changed: boolean };

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS accounts (
        id       TEXT PRIMARY KEY,
        currency TEXT NOT NULL,
        balance  INTEGER NOT NULL CHECK (balance >= 0)
      );
      CREATE TABLE IF NOT EXISTS charges (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        key          TEXT NOT NULL,
        charge_id    TEXT UNIQUE,
        account      TEXT,
        amount       INTEGER,
        currency     TEXT,
        status       TEXT NOT NULL CHECK (status IN ('captured', 'reversed', 'fenced', 'declined')),
        decline_code TEXT,
        created_at   TEXT NOT NULL,
        reversed_at  TEXT
      );
      CREATE INDEX IF NOT EXISTS charges_key ON charges (key, seq);
    `);
    this.q = {
      countAccounts: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM accounts'),
      getAccount: db.prepare<[string], Account>('SELECT id, currency, balance FROM accounts WHERE id = ?'),
      upsertAccount: db.prepare<[string, string, number]>(
        `INSERT INTO accounts (id, currency, balance) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET currency = excluded.currency, balance = excluded.balance`,
      ),
      addToBalance: db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?'),
      // A key may carry several rows once its idempotency record expired and it was used
      // again; the latest one is the key's current state.
      latestCharge: db.prepare<[string], ChargeRow>('SELECT * FROM charges WHERE key = ? ORDER BY seq DESC LIMIT 1'),
      insertCharge: db.prepare<
        [string, string | null, string | null, number | null, string | null, ChargeStatus, string | null, string]
      >(
        `INSERT INTO charges (key, charge_id, account, amount, currency, status, decline_code, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      markReversed: db.prepare<[string, number]>(`UPDATE charges SET status = 'reversed', reversed_at = ? WHERE seq = ?`),
    };
    const reverseTx = db.transaction((key: string) => this.reverseInTx(key));
    this.reverseTx = (key) => reverseTx.immediate(key);
  }

  /** Opens the demo accounts on first start only, so a restart never resets balances. */
  seedIfEmpty(): boolean {
    return this.db.transaction(() => {
      if (this.q.countAccounts.get()!.n > 0) return false;
      for (const a of DEMO_ACCOUNTS) this.q.upsertAccount.run(a.id, a.currency, a.balance);
      return true;
    }).immediate();
  }

  upsertAccount(account: Account): Account {
    this.q.upsertAccount.run(account.id, account.currency, account.balance);
    return { id: account.id, currency: account.currency, balance: account.balance };
  }

  getAccount(id: string): Account | undefined {
    return this.q.getAccount.get(id);
  }

  getCharge(key: string): ChargeView | undefined {
    const row = this.q.latestCharge.get(key);
    return row && toView(row);
  }

  /**
   * The effect of POST /charges, run inside the idempotency transaction. Declines are
   * answers (stored and replayed) and leave a `declined` row so a later reversal knows
   * there is nothing to refund.
   */
  charge(key: string, req: ChargeRequest): EffectResponse {
    const createdAt = new Date(this.now()).toISOString();
    const latest = this.q.latestCharge.get(key);
    if (latest?.status === 'fenced') {
      return {
        status: 410,
        body: problemBody(
          410,
          'charge_fenced',
          'this charge was reversed before it arrived; it will never be executed. Use a new key for a new charge',
        ),
      };
    }
    const decline = (status: number, code: string, detail: string): EffectResponse => {
      this.q.insertCharge.run(key, null, req.account, req.amount, req.currency, 'declined', code, createdAt);
      return { status, body: problemBody(status, code, detail) };
    };
    const account = this.q.getAccount.get(req.account);
    if (!account) return decline(422, 'account_not_found', `there is no account ${req.account}`);
    if (account.currency !== req.currency) {
      return decline(422, 'currency_mismatch', `account ${req.account} holds ${account.currency}, not ${req.currency}`);
    }
    if (account.balance < req.amount) {
      return decline(402, 'insufficient_funds', `account ${req.account} cannot cover ${req.amount} ${req.currency}`);
    }
    const id = `ch_${randomBytes(12).toString('hex')}`;
    this.q.addToBalance.run(-req.amount, req.account);
    this.q.insertCharge.run(key, id, req.account, req.amount, req.currency, 'captured', null, createdAt);
    const body: CapturedCharge = {
      id,
      key,
      account: req.account,
      amount: req.amount,
      currency: req.currency,
      status: 'captured',
      createdAt,
    };
    return { status: 201, body };
  }

  /**
   * POST /charges/{key}/reverse in one transaction, idempotent by state: refunds a captured
   * charge once, answers the same afterwards, and fences a key that has no charge yet so
   * the original, should it still arrive, is refused. `changed` tells whether this call
   * committed anything.
   */
  reverse(key: string): { reversal: Reversal; changed: boolean } {
    return this.reverseTx(key);
  }

  private reverseInTx(key: string): { reversal: Reversal; changed: boolean } {
    const now = new Date(this.now()).toISOString();
    const row = this.q.latestCharge.get(key);
    if (!row) {
      this.q.insertCharge.run(key, null, null, null, null, 'fenced', null, now);
      return { reversal: { key, chargeId: null, status: 'fenced', refunded: 0 }, changed: true };
    }
    switch (row.status) {
      case 'captured':
        this.q.addToBalance.run(row.amount!, row.account!);
        this.q.markReversed.run(now, row.seq);
        return { reversal: { key, chargeId: row.charge_id, status: 'reversed', refunded: row.amount! }, changed: true };
      case 'reversed':
        // The same answer as the reversal that refunded it: the refund happened once.
        return { reversal: { key, chargeId: row.charge_id, status: 'reversed', refunded: row.amount! }, changed: false };
      case 'fenced':
      case 'declined':
        return { reversal: { key, chargeId: row.charge_id, status: row.status, refunded: 0 }, changed: false };
    }
  }
}

function toView(row: ChargeRow): ChargeView {
  return {
    key: row.key,
    chargeId: row.charge_id,
    account: row.account,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    createdAt: row.created_at,
    reversedAt: row.reversed_at,
  };
}
