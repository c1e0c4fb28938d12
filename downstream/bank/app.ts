// The sandbox bank: a payment service with its own idempotency keys, used by the worker's
// activities, the tests and the benchmarks as a stand-in for a real PSP. Routes in
// routes.ts, the ledger in ledger.ts; here they are wired with the shared edge, the
// idempotent executor, the faults and the key purge.
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type Database from 'better-sqlite3';
import type { Logger } from '../../common/logger.js';
import { FaultInjector, registerFaultRoutes } from '../shared/faults.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from '../shared/http.js';
import { IdempotentExecutor } from '../shared/idempotency.js';
import { bindRequestContext } from '../shared/log-context.js';
import { BankLedger } from './ledger.js';
import { registerBankRoutes } from './routes.js';

export interface BankDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
  /** Open the demo accounts when the ledger is empty (default true). */
  seed?: boolean;
  /** Source of the fault probabilities' draws (tests make it deterministic). */
  random?: () => number;
}

export function buildApp(deps: BankDeps): SandboxApp {
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installHttpEdge(app);
  bindRequestContext(app, [
    { prefix: '/charges/', suffixes: ['/reverse', ''] },
    { prefix: '/credits/', suffixes: ['/reverse', ''] },
  ]);

  const ledger = new BankLedger(deps.db, { keyTtlMs: deps.keyTtlMs });
  if (deps.seed ?? true) ledger.seedIfEmpty();
  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs });
  const faults = new FaultInjector(deps.faults, deps.random);

  let stopPurging = () => {};
  app.addHook('onReady', async () => {
    stopPurging = executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed'));
  });
  app.addHook('onClose', async () => stopPurging());
  registerFaultRoutes(app, faults);
  registerBankRoutes(app, { ledger, executor, faults });
  return app;
}
