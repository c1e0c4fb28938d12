// The bank's two keyed movements of money, charges and credits, differ in direction and in
// their words (captured/credited, refunded/reclaimed) but share their rules: one movement
// per key, stored answers replayed, refusals stored, a keyed reversal that leaves a
// tombstone when nothing was moved. Each description gives what differs, so the shared
// rules are tested once, for both (movements.unit.test.ts, faults.unit.test.ts).
import type { Answer, Bank, Collection, LedgerRow } from './helpers.js';

export interface Movement {
  /** `charge`, `credit`: the step of its derived keys, and how the tests name it. */
  name: string;
  collection: Collection;
  /** The shape of its ids. */
  id: RegExp;
  /** The status of a movement that took effect. */
  done: string;
  /** The field naming the movement in its view and in its reversal's answer. */
  idField: string;
  /** The field of the reversal's answer that says how much it gave back. */
  undone: string;
  /** What one movement of `amount` does to the account's balance. */
  sign: -1 | 1;
  send(bank: Bank, key: string, body: unknown): Promise<Answer>;
}

export const MOVEMENTS: Movement[] = [
  {
    name: 'charge',
    collection: 'charges',
    id: /^ch_[0-9a-f]{24}$/,
    done: 'captured',
    idField: 'chargeId',
    undone: 'refunded',
    sign: -1,
    send: (bank, key, body) => bank.charge(key, body),
  },
  {
    name: 'credit',
    collection: 'credits',
    id: /^cr_[0-9a-f]{24}$/,
    done: 'credited',
    idField: 'creditId',
    undone: 'reclaimed',
    sign: 1,
    send: (bank, key, body) => bank.credit(key, body),
  },
];

/** The movement's ledger rows under `key`, oldest first. */
export const rowsOf = (bank: Bank, m: Movement, key: string): LedgerRow[] => bank.rows(m.collection, key);

/** GET /charges/{key} or /credits/{key}, the key percent-encoded. */
export const viewOf = (bank: Bank, m: Movement, key: string): Promise<Answer> =>
  bank.call('GET', `/${m.collection}/${encodeURIComponent(key)}`);
