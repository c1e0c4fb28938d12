// The sandbox reservation service: an inventory-hold service with its own idempotency keys,
// used by the worker's activities, the tests and the benchmarks as a stand-in for a real
// inventory system. Routes in routes.ts, the ledger in ledger.ts; here they are put in the
// frame every keyed service shares (the edge, the idempotent executor, the faults and the
// key purge), with the hold sweeper.
import { createSandboxApp, whileOpen, type SandboxDeps } from '../shared/app.js';
import type { SandboxApp } from '../shared/http.js';
import { ReservationLedger } from './ledger.js';
import { registerReservationRoutes } from './routes.js';
import { startSweeper } from './sweeper.js';

export interface ReservationsDeps extends SandboxDeps {
  /** Stock the demo SKUs when the inventory is empty (default true). */
  seed?: boolean;
  /** The clock for holds' expiry and keys' TTL (tests move it). */
  now?: () => number;
  /** How often the ledger expires due holds on its own (default 1 s). */
  sweepIntervalMs?: number;
}

export function buildApp(deps: ReservationsDeps): SandboxApp {
  const now = deps.now ?? Date.now;
  const { app, executor, faults } = createSandboxApp(
    deps,
    [{ prefix: '/reservations/', suffixes: ['/confirm', '/release', ''] }],
    now,
  );
  const ledger = new ReservationLedger(deps.db, now);
  if (deps.seed ?? true) ledger.seedIfEmpty();

  whileOpen(app, () =>
    startSweeper(ledger, deps.sweepIntervalMs ?? 1000, (err) => app.log.warn({ err }, 'expiring due holds failed')),
  );
  registerReservationRoutes(app, { ledger, executor, faults });
  return app;
}
