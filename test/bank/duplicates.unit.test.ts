// The line behind the idempotency layer: the ledger's own tables refuse a second entry
// moving money in one use of a key, whatever the code above them does. Exercised where a
// bug in the executor would land: the repository, the ledger called without the executor,
// and the HTTP app with a key its executor forgot too early.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BankLedger, DuplicateEntryError } from '../../downstream/bank/ledger.js';
import { bankRepository, type BankRepository, type EntryTable } from '../../downstream/bank/repository.js';
import { openDatabase } from '../../downstream/shared/db.js';
import { manualClock } from '../support/sandbox-harness.js';
import { expectProblem, startBank, uniqueKey } from './helpers.js';

const TTL = 60_000;

let dir: string;
let db: Database.Database;
let clock: ReturnType<typeof manualClock>;
let ledger: BankLedger;
let repo: BankRepository;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'retrysafe-bank-dup-'));
  db = openDatabase(join(dir, 'bank.db'));
  clock = manualClock();
  ledger = new BankLedger(db, { keyTtlMs: TTL, now: clock.now });
  repo = bankRepository(db);
  ledger.upsertAccount({ id: 'acc_a', currency: 'EUR', balance: 10_000 });
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const balance = () => ledger.getAccount('acc_a')!.balance;
const rows = (table: 'charges' | 'credits', key: string) =>
  db.prepare(`SELECT status, key_use AS keyUse FROM ${table} WHERE key = ? ORDER BY seq`).all(key);
const req = { account: 'acc_a', amount: 100, currency: 'EUR' };

describe('the tables', () => {
  it.each(['charges', 'credits'] as const)(
    '%s: a second entry moving money in one use of a key is refused by the database',
    (table) => {
      const entry = { key: 'k', account: 'acc_a', amount: 1, currency: 'EUR', declineCode: null, createdAt: 'x', keyUse: 1 };
      const applied = table === 'charges' ? 'captured' : 'credited';
      const book: EntryTable<string> = repo[table];
      book.insert({ ...entry, id: `${table}_1`, status: applied });

      expect(() => book.insert({ ...entry, id: `${table}_2`, status: applied })).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_UNIQUE' }),
      );
      // Reversed is still moved-and-undone, not room for another.
      book.markReversed(book.latest('k')!.seq, 'y');
      expect(() => book.insert({ ...entry, id: `${table}_3`, status: applied })).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_UNIQUE' }),
      );
      // Tombstones and declines move nothing: as many as happen.
      for (const status of ['fenced', 'fenced', 'declined', 'declined'] as const) {
        book.insert({ ...entry, id: null, status });
      }
      // The next use of the key may move money again.
      book.insert({ ...entry, id: `${table}_4`, status: applied, keyUse: 2 });
      expect(rows(table, 'k')).toEqual([
        { status: 'reversed', keyUse: 1 },
        { status: 'fenced', keyUse: 1 },
        { status: 'fenced', keyUse: 1 },
        { status: 'declined', keyUse: 1 },
        { status: 'declined', keyUse: 1 },
        { status: applied, keyUse: 2 },
      ]);
    },
  );

  it('refuses a key use below 1', () => {
    expect(() =>
      repo.charges.insert({
        key: 'k',
        id: 'ch_x',
        account: 'acc_a',
        amount: 1,
        currency: 'EUR',
        status: 'captured',
        declineCode: null,
        createdAt: 'x',
        keyUse: 0,
      }),
    ).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }));
  });
});

describe('the ledger, called twice for one key as a broken executor would', () => {
  it('refuses the second charge with DuplicateEntryError and moves the money once', () => {
    const key = uniqueKey();
    expect(ledger.charge(key, req, clock.now()).kind).toBe('captured');
    clock.advance(TTL - 1);

    expect(() => ledger.charge(key, req, clock.now())).toThrow(DuplicateEntryError);
    expect(() => ledger.charge(key, req, clock.now())).toThrow(`refused a second charge under key ${key} (use 1 of the key`);
    expect(balance()).toBe(9_900);
    expect(rows('charges', key)).toEqual([{ status: 'captured', keyUse: 1 }]);
  });

  it('refuses the second credit the same way', () => {
    const key = uniqueKey('credit');
    expect(ledger.credit(key, req, clock.now()).kind).toBe('credited');

    expect(() => ledger.credit(key, req, clock.now())).toThrow(DuplicateEntryError);
    expect(balance()).toBe(10_100);
    expect(rows('credits', key)).toEqual([{ status: 'credited', keyUse: 1 }]);
  });

  it('a reversal does not free the key: a charge after it, within the use, is still a duplicate', () => {
    const key = uniqueKey();
    ledger.charge(key, req, clock.now());
    expect(ledger.reverseCharge(key).reversal).toMatchObject({ status: 'reversed', refunded: 100 });

    expect(() => ledger.charge(key, req, clock.now())).toThrow(DuplicateEntryError);
    expect(balance()).toBe(10_000);
  });

  it('once the key has expired it is a new use, and money moves again, as a retried key does after its TTL', () => {
    const key = uniqueKey('credit');
    ledger.credit(key, req, clock.now());
    clock.advance(TTL);

    const again = ledger.credit(key, req, clock.now());

    expect(again.kind).toBe('credited');
    expect(rows('credits', key)).toEqual([
      { status: 'credited', keyUse: 1 },
      { status: 'credited', keyUse: 2 },
    ]);
    expect(balance()).toBe(10_200);
    expect(ledger.getCredit(key)).toMatchObject({ status: 'credited', createdAt: new Date(clock.now()).toISOString() });
  });

  it('fences stay answers, not errors: a fenced key refuses its late original with fenced every time', () => {
    const key = uniqueKey();
    ledger.reverseCharge(key);
    expect(ledger.charge(key, req, clock.now())).toEqual({ kind: 'fenced' });
    expect(ledger.charge(key, req, clock.now())).toEqual({ kind: 'fenced' });
    expect(balance()).toBe(10_000);
  });

  it('declines are answers too and never collide', () => {
    const key = uniqueKey();
    const tooMuch = { ...req, amount: 1_000_000 };
    expect(ledger.charge(key, tooMuch, clock.now()).kind).toBe('insufficient_funds');
    expect(ledger.charge(key, tooMuch, clock.now()).kind).toBe('insufficient_funds');
    expect(ledger.charge(key, req, clock.now()).kind).toBe('captured');
    expect(balance()).toBe(9_900);
  });
});

describe('over HTTP, when the executor forgets a key before its TTL', () => {
  it.each(['/charges', '/credits'] as const)(
    '%s: the retry is refused with 500 internal_error and the money moved once',
    async (path) => {
      const bank = await startBank();
      try {
        const account = await bank.openAccount(1_000);
        const key = uniqueKey();
        const body = { account, amount: 100, currency: 'EUR' };
        const first = await bank.call('POST', path, { key, body });
        expect(first.status).toBe(201);
        // The bug: the stored answer is gone although the key has not expired.
        bank.db.prepare('DELETE FROM idempotency_keys WHERE key = ?').run(key);

        const retry = await bank.call('POST', path, { key, body });

        const problem = expectProblem(retry, 500, 'internal_error');
        expect(problem.detail).not.toContain(key);
        expect(bank.balance(account)).toBe(path === '/charges' ? 900 : 1_100);
        expect(bank.keyRows(key)).toBe(0);
        const view = await bank.call('GET', `${path}/${encodeURIComponent(key)}`);
        expect(view.body).toMatchObject({ [path === '/charges' ? 'chargeId' : 'creditId']: first.body.id });
      } finally {
        await bank.close();
      }
    },
  );
});
