// The two sandbox services differ in their ledgers but share their edge: the same key
// rule, body limits, problem documents, configuration grammar and process life cycle.
// Each description here gives what differs, so the shared behaviour is tested once, for
// both, by the suites beside this file.
import { loadBankConfig } from '../../downstream/bank/config.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';
import type Database from 'better-sqlite3';
import type { SandboxConfig } from '../../downstream/shared/service.js';
import type { Answer, Call } from '../support/sandbox-harness.js';
import { PART_ENTRY } from '../../tools/stack-env.js';
import { startBank } from '../bank/helpers.js';
import { startReservations } from '../reservations/helpers.js';

export interface SandboxKind {
  /** The service's name as it logs it ("bank listening at …"). */
  name: string;
  /** Its entry point, relative to the repository. */
  entry: string;
  /** Prefix of its own variables: BANK_PORT, RESERVATIONS_DB… */
  prefix: 'BANK' | 'RESERVATIONS';
  defaults: { port: number; db: string };
  /** Its configuration loader, as its entry point calls it. */
  loadConfig(env: Record<string, string | undefined>): SandboxConfig;
  /** The keyed effect: POST path and a body it accepts. */
  effectPath: string;
  goodBody: Record<string, unknown>;
  /** The ledger table the effect writes its row to. */
  ledger: string;
  /** Starts it in this process on a fresh SQLite file (in `dir`, kept after close, when given). */
  start(opts?: StartOptions): Promise<StartedSandbox>;
  /** A seeded fact, read over HTTP, that each effect of `goodBody` changes once. */
  seededRead: { path: string; before: unknown; afterOneEffect: unknown; afterTwoEffects: unknown };
}

export interface StartOptions {
  /** Registers /_faults (SANDBOX_FAULTS); off by default. */
  faults?: boolean;
  /** Source of the fault probabilities' draws. */
  random?: () => number;
  dir?: string;
  /** How long a request waits for another process's write lock (default 5 s). */
  busyTimeoutMs?: number;
}

export interface StartedSandbox {
  call: Call;
  db: Database.Database;
  dbPath: string;
  keyRows(key: string): number;
  putFaults(faults: Record<string, unknown>): Promise<Answer>;
  close(): Promise<void>;
}

export const SANDBOXES: SandboxKind[] = [
  {
    name: 'bank',
    entry: PART_ENTRY.bank,
    prefix: 'BANK',
    defaults: { port: 4001, db: '.data/bank.db' },
    loadConfig: loadBankConfig,
    effectPath: '/charges',
    goodBody: { account: 'acc_alice', amount: 1250, currency: 'EUR' },
    ledger: 'charges',
    start: (opts) => startBank({ faults: false, ...opts }),
    seededRead: {
      path: '/accounts/acc_alice',
      before: { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 },
      afterOneEffect: { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 - 1250 },
      afterTwoEffects: { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 - 2 * 1250 },
    },
  },
  {
    name: 'reservations',
    entry: PART_ENTRY.reservations,
    prefix: 'RESERVATIONS',
    defaults: { port: 4002, db: '.data/reservations.db' },
    loadConfig: loadReservationsConfig,
    effectPath: '/reservations',
    goodBody: { items: [{ sku: 'sku_book', quantity: 2 }] },
    ledger: 'reservations',
    start: (opts) => startReservations({ faults: false, ...opts }),
    seededRead: {
      path: '/inventory/sku_book',
      before: { sku: 'sku_book', available: 100, held: 0 },
      afterOneEffect: { sku: 'sku_book', available: 98, held: 2 },
      afterTwoEffects: { sku: 'sku_book', available: 96, held: 4 },
    },
  },
];

/** The keyed effect with this Idempotency-Key (sent as is) and body. */
export function effect(kind: SandboxKind, call: Call, key: string, body: unknown = kind.goodBody): Promise<Answer> {
  return call('POST', kind.effectPath, { key, body });
}
