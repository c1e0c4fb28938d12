// The frame every keyed service's app is built in (the bank, the reservation service, the
// example shipping service): Fastify with the shared edge, log lines bound to the request's
// key, the idempotent executor and its periodic key purge, the fault injector with its
// routes, and GET /healthz. The service adds its ledger and its routes.
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type Database from 'better-sqlite3';
import { Type } from 'typebox';
import type { Logger } from '../../common/logger.js';
import { installRequestTracing } from '../../common/tracing/fastify.js';
import { FaultInjector, registerFaultRoutes } from './faults.js';
import { baseServerOptions, installHttpEdge, type SandboxApp } from './http.js';
import { IdempotentExecutor } from './idempotency.js';
import { bindRequestContext } from './log-context.js';

/** What every keyed service is built from. */
export interface SandboxDeps {
  db: Database.Database;
  /** Registers /_faults and lets faults touch the effect endpoints (SANDBOX_FAULTS). */
  faults: boolean;
  /** How long an idempotency key is remembered (KEY_TTL). */
  keyTtlMs: number;
  logger?: Logger;
  /** Source of the fault probabilities' draws (tests make it deterministic). */
  random?: () => number;
}

export interface SandboxFrame {
  app: SandboxApp;
  executor: IdempotentExecutor;
  faults: FaultInjector;
}

/**
 * The app before its routes. `keyedPaths` are the paths that carry a key (`/charges/{key}`
 * and its suffixes), for the log bindings; `now` is the clock of the keys' TTL.
 */
export function createSandboxApp(
  deps: SandboxDeps,
  keyedPaths: Array<{ prefix: string; suffixes: string[] }>,
  now?: () => number,
): SandboxFrame {
  const app = Fastify({
    ...baseServerOptions(),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  // First, so the server span continuing the caller's trace covers every hook (when tracing is on).
  installRequestTracing(app);
  installHttpEdge(app);
  bindRequestContext(app, keyedPaths);

  const executor = new IdempotentExecutor(deps.db, { ttlMs: deps.keyTtlMs, now });
  const faults = new FaultInjector(deps.faults, deps.random);
  whileOpen(app, () => executor.startPurging((err) => app.log.warn({ err }, 'idempotency key purge failed')));
  registerFaultRoutes(app, faults);
  app.get('/healthz', { schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));
  return { app, executor, faults };
}

/** Runs a periodic job from the moment the app is ready until it closes; `start` returns its stop. */
export function whileOpen(app: SandboxApp, start: () => () => void): void {
  let stop = () => {};
  app.addHook('onReady', async () => {
    stop = start();
  });
  app.addHook('onClose', async () => stop());
}
