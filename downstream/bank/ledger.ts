// The bank's ledger: what a charge and a reversal do to accounts, told as domain outcomes
// (captured, declined and why, fenced); the routes decide how each is answered over HTTP.
// A charge runs inside the idempotency transaction of its request, so the debit and the
// stored answer commit together; a reversal is idempotent by state and runs in its own.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { migrate } from './migrations.js';
import { bankRepository, type Account, type BankRepository, type ChargeRow, type ChargeStatus } from './repository.js';

export type { Account, ChargeStatus } from './repository.js';

export interface ChargeRequest {
  account: string;
  amount: number;
  currency: string;
}

/** A charge that moved money. */
export interface CapturedCharge {
  id: string;
  key: string;
  account: string;
  amount: number;
  currency: string;
  status: 'captured';
  createdAt: string;
}

/** What the ledger knows about the latest charge under a key. */
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

export type ChargeOutcome =
  | { kind: 'captured'; charge: CapturedCharge }
  /** A reversal fenced the key before this charge arrived: it is never executed. */
  | { kind: 'fenced' }
  | { kind: 'account_not_found'; account: string }
  | { kind: 'currency_mismatch'; account: string; held: string; requested: string }
  | { kind: 'insufficient_funds'; account: string; amount: number; currency: string };

/** A reversal's answer, and whether this call committed anything. */
export interface ReversalOutcome {
  reversal: Reversal;
  changed: boolean;
}

export const DEMO_ACCOUNTS: readonly Account[] = [
  { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 },
  { id: 'acc_bob', currency: 'EUR', balance: 2_000 },
];

export class BankLedger {
  private readonly repo: BankRepository;
  private readonly reverseTx: (key: string) => ReversalOutcome;
  private readonly seedTx: () => boolean;

  constructor(
    db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db);
    this.repo = bankRepository(db);
    // IMMEDIATE takes the write lock at BEGIN: the row read and the row written belong to
    // the same instant, even with another process on the file.
    const reverseTx = db.transaction((key: string) => this.reverseInTx(key));
    this.reverseTx = (key) => reverseTx.immediate(key);
    const seedTx = db.transaction(() => {
      if (this.repo.countAccounts() > 0) return false;
      for (const a of DEMO_ACCOUNTS) this.repo.upsertAccount(a);
      return true;
    });
    this.seedTx = () => seedTx.immediate();
  }

  /** Opens the demo accounts on first start only, so a restart never resets balances. */
  seedIfEmpty(): boolean {
    return this.seedTx();
  }

  upsertAccount(account: Account): Account {
    this.repo.upsertAccount(account);
    return { id: account.id, currency: account.currency, balance: account.balance };
  }

  getAccount(id: string): Account | undefined {
    return this.repo.getAccount(id);
  }

  getCharge(key: string): ChargeView | undefined {
    const row = this.repo.latestCharge(key);
    return row && toView(row);
  }

  /**
   * Charges once under `key`; call inside the request's idempotency transaction. A decline
   * leaves a `declined` row, so a later reversal knows there is nothing to refund.
   */
  charge(key: string, req: ChargeRequest): ChargeOutcome {
    const createdAt = new Date(this.now()).toISOString();
    if (this.repo.latestCharge(key)?.status === 'fenced') return { kind: 'fenced' };
    const decline = <O extends ChargeOutcome>(outcome: O): O => {
      this.repo.insertCharge({ key, chargeId: null, ...req, status: 'declined', declineCode: outcome.kind, createdAt });
      return outcome;
    };
    const account = this.repo.getAccount(req.account);
    if (!account) return decline({ kind: 'account_not_found', account: req.account });
    if (account.currency !== req.currency) {
      return decline({ kind: 'currency_mismatch', account: req.account, held: account.currency, requested: req.currency });
    }
    if (account.balance < req.amount) {
      return decline({ kind: 'insufficient_funds', account: req.account, amount: req.amount, currency: req.currency });
    }
    const id = `ch_${randomBytes(12).toString('hex')}`;
    this.repo.addToBalance(req.account, -req.amount);
    this.repo.insertCharge({ key, chargeId: id, ...req, status: 'captured', declineCode: null, createdAt });
    return {
      kind: 'captured',
      charge: { id, key, account: req.account, amount: req.amount, currency: req.currency, status: 'captured', createdAt },
    };
  }

  /**
   * Refunds a captured charge once and answers the same afterwards; fences a key that has
   * no charge yet, so the original, should it still arrive, is refused.
   */
  reverse(key: string): ReversalOutcome {
    return this.reverseTx(key);
  }

  private reverseInTx(key: string): ReversalOutcome {
    const now = new Date(this.now()).toISOString();
    const row = this.repo.latestCharge(key);
    if (!row) {
      this.repo.insertCharge({
        key,
        chargeId: null,
        account: null,
        amount: null,
        currency: null,
        status: 'fenced',
        declineCode: null,
        createdAt: now,
      });
      return { reversal: { key, chargeId: null, status: 'fenced', refunded: 0 }, changed: true };
    }
    switch (row.status) {
      case 'captured':
        this.repo.addToBalance(row.account!, row.amount!);
        this.repo.markReversed(row.seq, now);
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
