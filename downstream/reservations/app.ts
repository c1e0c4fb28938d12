// The sandbox reservation service: an inventory-hold service with its own idempotency keys,
// used by the worker's activities, the tests and the benchmarks as a stand-in for a real
// inventory system. Routes in routes.ts, the ledger in ledger.ts; here they are wired with
// the shared edge, the idempotent executor, the faults, the key purge and the hold sweeper.
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type Database from 'better-sqlite3';
import type { Logger } from '../../common/logger.js';
import { FaultInjector, registerFaultRoutes } from '../shared/faults.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from '../shared/http.js';
import { IdempotentExecutor } from '../shared/idempotency.js';
import { bindRequestContext } from '../shared/log-context.js';
import { ReservationLedger } from './ledger.js';
import { registerReservationRoutes } from './routes.js';
import { startSweeper } from './sweeper.js';

export interface ReservationsDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
  /** Stock the demo SKUs when the inventory is empty (default true). */
  seed?: boolean;
  /** Source of the fault probabilities' draws (tests make it deterministic). */
  random?: () => number;
  /** The clock for holds' expiry and keys' TTL (tests move it). */
  now?: () => number;
  /** How often the ledger expires due holds on its own (default 1 s). */
  sweepIntervalMs?: number;
}

export function buildApp(deps: ReservationsDeps): SandboxApp {
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installHttpEdge(app);
  bindRequestContext(app, [{ prefix: '/reservations/', suffixes: ['/confirm', '/release', ''] }]);

  const now = deps.now ?? Date.now;
  const ledger = new ReservationLedger(deps.db, now);
  if (deps.seed ?? true) ledger.seedIfEmpty();
  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs, now });
  const faults = new FaultInjector(deps.faults, deps.random);

  let stopTimers = () => {};
  app.addHook('onReady', async () => {
    const stopPurging = executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed'));
    const stopSweeping = startSweeper(ledger, deps.sweepIntervalMs ?? 1000, (err) =>
      app.log.warn({ err }, 'expiring due holds failed'),
    );
    stopTimers = () => {
      stopPurging();
      stopSweeping();
    };
  });
  app.addHook('onClose', async () => stopTimers());
  registerFaultRoutes(app, faults);
  registerReservationRoutes(app, { ledger, executor, faults });
  return app;
}
