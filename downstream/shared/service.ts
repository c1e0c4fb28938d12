// What the two sandbox services share outside their HTTP routes: settings read once from
// `<PREFIX>_HOST/_PORT/_DB` plus KEY_TTL, SANDBOX_FAULTS and LOG_LEVEL, and an entry point
// that opens the database, listens, and closes both cleanly on SIGTERM/SIGINT.
import { z } from 'zod';
import { duration, flag, logLevel, parseEnv, port } from '../../common/env.js';
import { createLogger, type Logger } from '../../common/logger.js';
import { startTracing, stopTracing } from '../../common/tracing/start.js';
import { openDatabase, type Database } from './db.js';
import type { SandboxApp } from './http.js';

const DAY = 24 * 60 * 60 * 1000;

export interface SandboxConfig {
  host: string;
  port: number;
  dbPath: string;
  keyTtlMs: number;
  faults: boolean;
  logLevel: z.infer<typeof logLevel>;
}

function sandboxEnv(prefix: string, defaults: { port: number; db: string }) {
  return {
    [`${prefix}_HOST`]: z.string().default('127.0.0.1'),
    [`${prefix}_PORT`]: port.default(defaults.port),
    [`${prefix}_DB`]: z.string().default(defaults.db),
    /** How long an idempotency key is remembered before it is purged. */
    KEY_TTL: duration({ min: 1000 }).default(7 * DAY),
    SANDBOX_FAULTS: flag.default(false),
    LOG_LEVEL: logLevel.default('info'),
  };
}

/** Throws ConfigError naming every bad variable. */
export function loadSandboxConfig(
  prefix: string,
  defaults: { port: number; db: string },
  env: Record<string, string | undefined>,
): SandboxConfig {
  const e = parseEnv(sandboxEnv(prefix, defaults), env) as Record<string, unknown>;
  return {
    host: e[`${prefix}_HOST`] as string,
    port: e[`${prefix}_PORT`] as number,
    dbPath: e[`${prefix}_DB`] as string,
    keyTtlMs: e.KEY_TTL as number,
    faults: e.SANDBOX_FAULTS as boolean,
    logLevel: e.LOG_LEVEL as SandboxConfig['logLevel'],
  };
}

/** The entry point of a sandbox service; fails loudly (exit 1) when it cannot start. */
export function runSandbox(
  name: string,
  loadConfig: () => SandboxConfig,
  build: (deps: { db: Database.Database; faults: boolean; keyTtlMs: number; logger: Logger; seed: boolean }) => SandboxApp,
): void {
  const run = async () => {
    // `retrysafe-bank`, `retrysafe-reservations`, `retrysafe-shipping`: a server span per request.
    await startTracing(name);
    const config = loadConfig();
    const logger = createLogger(name, { level: config.logLevel });
    const db = openDatabase(config.dbPath);
    const app = build({ db, faults: config.faults, keyTtlMs: config.keyTtlMs, logger, seed: true });
    if (config.faults) logger.warn('fault injection enabled (SANDBOX_FAULTS): PUT /_faults changes them');

    let closing = false;
    const shutdown = (signal: string) => {
      if (closing) return;
      closing = true;
      logger.info({ signal }, `${name} stopping`);
      app
        .close()
        .then(() => db.close())
        .then(() => stopTracing())
        .then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, `${name} did not stop cleanly`);
            process.exit(1);
          },
        );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));

    await app.listen({ port: config.port, host: config.host, listenTextResolver: (url) => `${name} listening at ${url}` });
  };
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
