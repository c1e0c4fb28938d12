// The two sandbox services differ in their ledgers but share their edge: the same key
// rule, body limits, problem documents, configuration grammar and process life cycle.
// Each description here gives what differs, so the shared behaviour is tested once, for
// both, by the suites beside this file.
import { loadBankConfig } from '../../downstream/bank/config.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';
import type { SandboxConfig } from '../../downstream/shared/service.js';
import type { Answer, Call } from '../support/sandbox-harness.js';
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
  /** Starts it in this process on a fresh SQLite file. */
  start(): Promise<{ call: Call; keyRows(key: string): number; close(): Promise<void> }>;
  /** A seeded fact, read over HTTP, that one effect of `goodBody` changes once. */
  seededRead: { path: string; before: unknown; afterOneEffect: unknown };
}

export const SANDBOXES: SandboxKind[] = [
  {
    name: 'bank',
    entry: 'downstream/bank/server.ts',
    prefix: 'BANK',
    defaults: { port: 4001, db: '.data/bank.db' },
    loadConfig: loadBankConfig,
    effectPath: '/charges',
    goodBody: { account: 'acc_alice', amount: 1250, currency: 'EUR' },
    start: () => startBank(),
    seededRead: {
      path: '/accounts/acc_alice',
      before: { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 },
      afterOneEffect: { id: 'acc_alice', currency: 'EUR', balance: 1_000_000 - 1250 },
    },
  },
  {
    name: 'reservations',
    entry: 'downstream/reservations/server.ts',
    prefix: 'RESERVATIONS',
    defaults: { port: 4002, db: '.data/reservations.db' },
    loadConfig: loadReservationsConfig,
    effectPath: '/reservations',
    goodBody: { items: [{ sku: 'sku_book', quantity: 2 }] },
    start: () => startReservations(),
    seededRead: {
      path: '/inventory/sku_book',
      before: { sku: 'sku_book', available: 100, held: 0 },
      afterOneEffect: { sku: 'sku_book', available: 98, held: 2 },
    },
  },
];

/** The keyed effect with this Idempotency-Key (sent as is) and body. */
export function effect(kind: SandboxKind, call: Call, key: string, body: unknown = kind.goodBody): Promise<Answer> {
  return call('POST', kind.effectPath, { key, body });
}
