// The bank's SQL, one prepared statement per question or change. No transaction here: the
// ledger decides which statements belong to one.
import type Database from 'better-sqlite3';

export interface Account {
  id: string;
  currency: string;
  balance: number;
}

export type ChargeStatus = 'captured' | 'reversed' | 'fenced' | 'declined';
export type CreditStatus = 'credited' | 'reversed' | 'fenced' | 'declined';

/**
 * A row of `charges` or `credits`: the two tables have one shape, an entry that moved
 * money (`captured` / `credited`, later perhaps `reversed`), a decline, or a tombstone.
 * `id` is null unless the entry moved money.
 */
export interface EntryRow<S extends string> {
  seq: number;
  key: string;
  id: string | null;
  account: string | null;
  amount: number | null;
  currency: string | null;
  status: S;
  declineCode: string | null;
  createdAt: string;
  reversedAt: string | null;
  /** Which use of the key the row belongs to: 1, then one more each time the key is used again after it expired. */
  keyUse: number;
}

export type NewEntry<S extends string> = Omit<EntryRow<S>, 'seq' | 'reversedAt'>;

/** The statements over one entry table. */
export interface EntryTable<S extends string> {
  /** The key's current state: a key may carry several rows once its idempotency record expired and it was used again. */
  latest(key: string): EntryRow<S> | undefined;
  /** The key's latest entry that moved money (reversed since or not). */
  latestMoved(key: string): EntryRow<S> | undefined;
  /** Throws SQLITE_CONSTRAINT_UNIQUE for a second entry moving money in one use of a key. */
  insert(entry: NewEntry<S>): void;
  markReversed(seq: number, at: string): void;
}

const ENTRY_TABLES = {
  charges: 'charge_id',
  credits: 'credit_id',
} as const;

function entryTable<S extends string>(db: Database.Database, table: keyof typeof ENTRY_TABLES): EntryTable<S> {
  const idColumn = ENTRY_TABLES[table];
  const columns = `seq, key, ${idColumn} AS id, account, amount, currency, status, decline_code AS declineCode,
                   created_at AS createdAt, reversed_at AS reversedAt, key_use AS keyUse`;
  const latest = db.prepare<[string], EntryRow<S>>(`SELECT ${columns} FROM ${table} WHERE key = ? ORDER BY seq DESC LIMIT 1`);
  const latestMoved = db.prepare<[string], EntryRow<S>>(
    `SELECT ${columns} FROM ${table} WHERE key = ? AND ${idColumn} IS NOT NULL ORDER BY seq DESC LIMIT 1`,
  );
  const insert = db.prepare<
    [string, string | null, string | null, number | null, string | null, S, string | null, string, number]
  >(
    `INSERT INTO ${table} (key, ${idColumn}, account, amount, currency, status, decline_code, created_at, key_use)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const markReversed = db.prepare<[string, number]>(`UPDATE ${table} SET status = 'reversed', reversed_at = ? WHERE seq = ?`);
  return {
    latest: (key) => latest.get(key),
    latestMoved: (key) => latestMoved.get(key),
    insert: (e) => void insert.run(e.key, e.id, e.account, e.amount, e.currency, e.status, e.declineCode, e.createdAt, e.keyUse),
    markReversed: (seq, at) => void markReversed.run(at, seq),
  };
}

export function bankRepository(db: Database.Database) {
  const countAccounts = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM accounts');
  const getAccount = db.prepare<[string], Account>('SELECT id, currency, balance FROM accounts WHERE id = ?');
  const upsertAccount = db.prepare<[string, string, number]>(
    `INSERT INTO accounts (id, currency, balance) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET currency = excluded.currency, balance = excluded.balance`,
  );
  const addToBalance = db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?');

  return {
    countAccounts: (): number => countAccounts.get()!.n,
    getAccount: (id: string): Account | undefined => getAccount.get(id),
    upsertAccount: (a: Account): void => void upsertAccount.run(a.id, a.currency, a.balance),
    addToBalance: (account: string, delta: number): void => void addToBalance.run(delta, account),
    charges: entryTable<ChargeStatus>(db, 'charges'),
    credits: entryTable<CreditStatus>(db, 'credits'),
  };
}

export type BankRepository = ReturnType<typeof bankRepository>;
