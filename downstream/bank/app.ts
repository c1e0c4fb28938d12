// The sandbox bank: a payment service with its own idempotency keys, used by the worker's
// activities, the tests and the benchmarks as a stand-in for a real PSP. Routes in
// routes.ts, the ledger in ledger.ts; here they are put in the frame every keyed service
// shares (the edge, the idempotent executor, the faults and the key purge).
import { createSandboxApp, type SandboxDeps } from '../shared/app.js';
import type { SandboxApp } from '../shared/http.js';
import { BankLedger } from './ledger.js';
import { registerBankRoutes } from './routes.js';

export interface BankDeps extends SandboxDeps {
  /** Open the demo accounts when the ledger is empty (default true). */
  seed?: boolean;
}

export function buildApp(deps: BankDeps): SandboxApp {
  const { app, executor, faults } = createSandboxApp(deps, [
    { prefix: '/charges/', suffixes: ['/reverse', ''] },
    { prefix: '/credits/', suffixes: ['/reverse', ''] },
  ]);
  const ledger = new BankLedger(deps.db, { keyTtlMs: deps.keyTtlMs });
  if (deps.seed ?? true) ledger.seedIfEmpty();
  registerBankRoutes(app, { ledger, executor, faults });
  return app;
}
