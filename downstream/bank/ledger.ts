// The bank's ledger: what charges, credits and their reversals do to accounts, told as
// domain outcomes (captured or credited, declined and why, fenced); the routes decide how
// each is answered over HTTP. A charge or a credit runs inside the idempotency transaction
// of its request, so the balance change and the stored answer commit together; a reversal
// is idempotent by state and runs in its own.
//
// Charges and credits are one mechanism with two directions: an entry under a key, moving
// an amount out of (charge) or into (credit) an account, undone at most once by its
// reversal, and fenced by a reversal that arrives first.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { migrate } from './migrations.js';
import {
  bankRepository,
  type Account,
  type BankRepository,
  type ChargeStatus,
  type CreditStatus,
  type EntryRow,
  type EntryTable,
} from './repository.js';

export type { Account, ChargeStatus, CreditStatus } from './repository.js';

/** What a charge or a credit asks for: an amount of a currency, out of or into an account. */
export interface MovementRequest {
  account: string;
  amount: number;
  currency: string;
}
export type ChargeRequest = MovementRequest;
export type CreditRequest = MovementRequest;

/** An entry that moved money, as it was answered when it did. */
interface AppliedEntry<S extends 'captured' | 'credited'> {
  id: string;
  key: string;
  account: string;
  amount: number;
  currency: string;
  status: S;
  createdAt: string;
}
export type CapturedCharge = AppliedEntry<'captured'>;
export type Credit = AppliedEntry<'credited'>;

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

/** What the ledger knows about the latest credit under a key. */
export interface CreditView {
  key: string;
  creditId: string | null;
  account: string | null;
  amount: number | null;
  currency: string | null;
  status: CreditStatus;
  createdAt: string;
  reversedAt: string | null;
}

/** A reversal leaves the entry reversed, finds it declined, or fences a key that has none. */
export type ReversalStatus = 'reversed' | 'fenced' | 'declined';

export interface Reversal {
  key: string;
  chargeId: string | null;
  status: ReversalStatus;
  refunded: number;
}

export interface CreditReversal {
  key: string;
  creditId: string | null;
  status: ReversalStatus;
  reclaimed: number;
}

/** Refusals a charge and a credit share. */
export type Refusal =
  /** A reversal fenced the key before this entry arrived: it is never executed. */
  | { kind: 'fenced' }
  | { kind: 'account_not_found'; account: string }
  | { kind: 'currency_mismatch'; account: string; held: string; requested: string };

type InsufficientFunds = { kind: 'insufficient_funds'; account: string; amount: number; currency: string };

export type ChargeOutcome = { kind: 'captured'; charge: CapturedCharge } | Refusal | InsufficientFunds;
export type CreditOutcome = { kind: 'credited'; credit: Credit } | Refusal;

/** A reversal's answer, and whether this call committed anything. */
export interface ReversalOutcome<R = Reversal> {
  reversal: R;
  changed: boolean;
}

export const DEMO_ACCOUNTS: readonly Account[] = [
  { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 },
  { id: 'acc_bob', currency: 'EUR', balance: 2_000 },
];

/**
 * The database refused a second entry moving money in one use of a key. The idempotency
 * layer should have answered the first one's stored response instead; this is the line
 * behind it, so reaching it means a bug there. The request's transaction rolls back and
 * nothing moves.
 */
export class DuplicateEntryError extends Error {
  constructor(noun: string, key: string, keyUse: number) {
    super(
      `refused a second ${noun} under key ${key} (use ${keyUse} of the key, whose idempotency record has not expired): the idempotency layer let a duplicate through`,
    );
    this.name = 'DuplicateEntryError';
  }
}

export interface BankLedgerOptions {
  /** How long an idempotency key is remembered (KEY_TTL): a key is used again only after it. */
  keyTtlMs: number;
  now?: () => number;
}

/** What sets the two directions apart. */
interface Direction<S extends 'captured' | 'credited'> {
  table: EntryTable<S | 'reversed' | 'fenced' | 'declined'>;
  noun: 'charge' | 'credit';
  applied: S;
  idPrefix: string;
  /** The balance change of applying `amount`; its reversal is the opposite. */
  sign: -1 | 1;
}

export class BankLedger {
  private readonly repo: BankRepository;
  private readonly charges: Direction<'captured'>;
  private readonly credits: Direction<'credited'>;
  private readonly immediate: <T>(fn: () => T) => T;
  private readonly keyTtlMs: number;
  private readonly now: () => number;

  constructor(db: Database.Database, opts: BankLedgerOptions) {
    if (!(opts.keyTtlMs > 0)) throw new Error('keyTtlMs must be positive');
    this.keyTtlMs = opts.keyTtlMs;
    this.now = opts.now ?? Date.now;
    migrate(db);
    this.repo = bankRepository(db);
    this.charges = { table: this.repo.charges, noun: 'charge', applied: 'captured', idPrefix: 'ch', sign: -1 };
    this.credits = { table: this.repo.credits, noun: 'credit', applied: 'credited', idPrefix: 'cr', sign: 1 };
    // IMMEDIATE takes the write lock at BEGIN: the row read and the row written belong to
    // the same instant, even with another process on the file.
    const tx = db.transaction((fn: () => unknown) => fn());
    this.immediate = <T>(fn: () => T) => tx.immediate(fn) as T;
  }

  /** Opens the demo accounts on first start only, so a restart never resets balances. */
  seedIfEmpty(): boolean {
    return this.immediate(() => {
      if (this.repo.countAccounts() > 0) return false;
      for (const a of DEMO_ACCOUNTS) this.repo.upsertAccount(a);
      return true;
    });
  }

  upsertAccount(account: Account): Account {
    this.repo.upsertAccount(account);
    return { id: account.id, currency: account.currency, balance: account.balance };
  }

  getAccount(id: string): Account | undefined {
    return this.repo.getAccount(id);
  }

  getCharge(key: string): ChargeView | undefined {
    const row = this.repo.charges.latest(key);
    if (!row) return undefined;
    const { id, ...view } = viewOf(row);
    return { chargeId: id, ...view };
  }

  getCredit(key: string): CreditView | undefined {
    const row = this.repo.credits.latest(key);
    if (!row) return undefined;
    const { id, ...view } = viewOf(row);
    return { creditId: id, ...view };
  }

  /**
   * Charges once under `key`; call inside the request's idempotency transaction, with the
   * instant its key was claimed. A decline leaves a `declined` row, so a later reversal
   * knows there is nothing to refund. Throws DuplicateEntryError for a second charge in
   * one use of the key.
   */
  charge(key: string, req: ChargeRequest, claimedAt: number = this.now()): ChargeOutcome {
    const outcome = this.enter(this.charges, key, req, claimedAt, (account): InsufficientFunds | undefined =>
      account.balance < req.amount
        ? { kind: 'insufficient_funds', account: req.account, amount: req.amount, currency: req.currency }
        : undefined,
    );
    return outcome.kind === 'applied' ? { kind: 'captured', charge: outcome.entry } : outcome;
  }

  /** Credits once under `key`; the same contract as `charge`, money moving the other way. */
  credit(key: string, req: CreditRequest, claimedAt: number = this.now()): CreditOutcome {
    const outcome = this.enter(this.credits, key, req, claimedAt);
    return outcome.kind === 'applied' ? { kind: 'credited', credit: outcome.entry } : outcome;
  }

  /**
   * Refunds a captured charge once and answers the same afterwards; fences a key that has
   * no charge yet, so the original, should it still arrive, is refused.
   */
  reverseCharge(key: string): ReversalOutcome {
    const { id, status, amount, changed } = this.immediate(() => this.undo(this.charges, key));
    return { reversal: { key, chargeId: id, status, refunded: amount }, changed };
  }

  /**
   * Takes a credit back once and answers the same afterwards; fences a key that has no
   * credit yet. The clawback happens even when the account has spent the money since,
   * leaving its balance below zero: a compensation must be able to finish, and the debt is
   * the bank's to collect, not the saga's to wait for.
   */
  reverseCredit(key: string): ReversalOutcome<CreditReversal> {
    const { id, status, amount, changed } = this.immediate(() => this.undo(this.credits, key));
    return { reversal: { key, creditId: id, status, reclaimed: amount }, changed };
  }

  private enter<S extends 'captured' | 'credited', D extends { kind: string } = never>(
    direction: Direction<S>,
    key: string,
    req: MovementRequest,
    claimedAt: number,
    declines?: (account: Account) => D | undefined,
  ): { kind: 'applied'; entry: AppliedEntry<S> } | Refusal | D {
    const createdAt = new Date(claimedAt).toISOString();
    const keyUse = this.keyUseAt(direction, key, claimedAt);
    if (direction.table.latest(key)?.status === 'fenced') return { kind: 'fenced' };
    const decline = <O extends Refusal | D>(outcome: O): O => {
      direction.table.insert({ key, id: null, ...req, status: 'declined', declineCode: outcome.kind, createdAt, keyUse });
      return outcome;
    };
    const account = this.repo.getAccount(req.account);
    if (!account) return decline({ kind: 'account_not_found', account: req.account });
    if (account.currency !== req.currency) {
      return decline({ kind: 'currency_mismatch', account: req.account, held: account.currency, requested: req.currency });
    }
    const declined = declines?.(account);
    if (declined) return decline(declined);
    const id = `${direction.idPrefix}_${randomBytes(12).toString('hex')}`;
    // The entry first, then the balance: a refused duplicate leaves the balance alone even
    // when a caller runs this outside a transaction.
    try {
      direction.table.insert({ key, id, ...req, status: direction.applied, declineCode: null, createdAt, keyUse });
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new DuplicateEntryError(direction.noun, key, keyUse);
      }
      throw err;
    }
    this.repo.addToBalance(req.account, direction.sign * req.amount);
    return {
      kind: 'applied',
      entry: { id, key, account: req.account, amount: req.amount, currency: req.currency, status: direction.applied, createdAt },
    };
  }

  /**
   * Which use of `key` an entry made at `at` belongs to. The key's idempotency record lives
   * KEY_TTL from its claim; an entry that moved money less than that before `at` belongs to
   * the use still running, so a second one beside it is a duplicate the index refuses.
   */
  private keyUseAt<S extends 'captured' | 'credited'>(direction: Direction<S>, key: string, at: number): number {
    const moved = direction.table.latestMoved(key);
    if (!moved) return 1;
    return at - Date.parse(moved.createdAt) >= this.keyTtlMs ? moved.keyUse + 1 : moved.keyUse;
  }

  private undo<S extends 'captured' | 'credited'>(
    direction: Direction<S>,
    key: string,
  ): { id: string | null; status: ReversalStatus; amount: number; changed: boolean } {
    const now = new Date(this.now()).toISOString();
    const row = direction.table.latest(key);
    if (!row) {
      direction.table.insert({
        key,
        id: null,
        account: null,
        amount: null,
        currency: null,
        status: 'fenced',
        declineCode: null,
        createdAt: now,
        // A key with no rows at all is in its first use.
        keyUse: 1,
      });
      return { id: null, status: 'fenced', amount: 0, changed: true };
    }
    if (row.status === 'reversed') {
      // The same answer as the reversal that undid it: the money moved back once.
      return { id: row.id, status: 'reversed', amount: row.amount!, changed: false };
    }
    if (row.status === 'fenced' || row.status === 'declined') {
      // Nothing was moved, so nothing moves back.
      return { id: row.id, status: row.status, amount: 0, changed: false };
    }
    this.repo.addToBalance(row.account!, -direction.sign * row.amount!);
    direction.table.markReversed(row.seq, now);
    return { id: row.id, status: 'reversed', amount: row.amount!, changed: true };
  }
}

function viewOf<S extends string>(row: EntryRow<S>) {
  return {
    key: row.key,
    id: row.id,
    account: row.account,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    createdAt: row.createdAt,
    reversedAt: row.reversedAt,
  };
}
