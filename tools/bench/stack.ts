// The bench's own stack, as a user runs it, through the repository's one supervisor, in
// two layers: the sandboxes (bank, reservations, the plain replay endpoint), started once
// per run and shared by everything that checks out, the peers included; and an engine on
// top of them: a Temporal dev server on a SQLite file (tools/dev-server.ts, or the same
// server without some of its tuning for the ablation), the API as a `node --import tsx`
// process, and two worker processes (retrysafe, and the bare baselines with the real
// activities beside the no-op one) with prebuilt bundles. An engine can be stopped and another started on the same sandboxes, which is
// how the ablation compares server settings. Everything listens on 127.0.0.1 and stops in
// reverse order: the APIs first, Temporal last (so SQLite closes cleanly).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import Database from 'better-sqlite3';
import type { PartSpec } from '../supervisor/part.js';
import { quietLogger } from '../quiet-logger.js';
import { downstreamEnv, loopbackUrl, PART_ENTRY, partEnv, temporalEnv, type StackDescription } from '../stack-env.js';
import { freePort } from '../supervisor/ports.js';
import { httpProbe, lineProbe, type Probe } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli, temporalCliVersion } from '../temporal-cli.js';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../worker/create.js';
import { startDevServerWithout } from './tuning.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The baselines' workflows (tools/bench/baseline/workflows.ts), bundled apart from retrysafe's. */
export const BASELINE_WORKFLOWS = fileURLToPath(new URL('./baseline/workflows.ts', import.meta.url));

/**
 * A Node process of the bench (`node --import tsx <entry>`): this process's environment
 * without any cluster or retrysafe settings, so that nothing but `env` configures it.
 */
export function benchProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: Probe,
  execArgv: string[] = [],
): PartSpec {
  return {
    name,
    command: { entry, execArgv },
    env: { LOG_PRETTY: '0', ...env },
    unsetEnv: [/^TEMPORAL_/, /^RETRYSAFE_/],
    ready,
    keepLines: 500,
  };
}

export interface Sandboxes {
  urls: { bank: string; reservations: string; plain: string };
  /** Process ids by role, for /proc accounting. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

export async function startSandboxes(opts: {
  dataDir: string;
  logLevel: string;
  plainBody: string;
  execArgv?: Record<string, string[]>;
}): Promise<Sandboxes> {
  mkdirSync(opts.dataDir, { recursive: true });
  const supervisor = new Supervisor();
  const [bankPort, reservationsPort, plainPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const places: StackDescription = {
    bank: { host: '127.0.0.1', port: bankPort, db: join(opts.dataDir, 'bank.db') },
    reservations: { host: '127.0.0.1', port: reservationsPort, db: join(opts.dataDir, 'reservations.db') },
  };
  const urls = { bank: loopbackUrl(bankPort), reservations: loopbackUrl(reservationsPort), plain: loopbackUrl(plainPort) };
  const part = (name: string, entry: string, env: Record<string, string>, ready: Probe) =>
    supervisor.add(benchProcess(name, entry, { LOG_LEVEL: opts.logLevel, ...env }, ready, opts.execArgv?.[name] ?? []));
  try {
    await Promise.all([
      part('bank', PART_ENTRY.bank, partEnv(places, 'bank'), httpProbe(`${urls.bank}/healthz`)).start(),
      part(
        'reservations',
        PART_ENTRY.reservations,
        partEnv(places, 'reservations'),
        httpProbe(`${urls.reservations}/healthz`),
      ).start(),
      part(
        'plain',
        'tools/bench/processes/plain.ts',
        { BENCH_PLAIN_PORT: String(plainPort), BENCH_PLAIN_BODY: opts.plainBody },
        lineProbe('bench plain listening'),
      ).start(),
    ]);
  } catch (err) {
    await supervisor.stopAll();
    throw err;
  }
  return {
    urls,
    pids: Object.fromEntries(supervisor.parts.map((p) => [p.name, p.pid!])),
    stop: () => supervisor.stopAll(),
  };
}

export interface Bundles {
  retrysafe: string;
  baseline: string;
  ms: number;
}

/** Both workers' workflow bundles, built once per run and written under `dataDir`. */
export async function bundleWorkflows(dataDir: string): Promise<Bundles> {
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();
  const [retrysafe, baseline] = await Promise.all([
    bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quietLogger() }),
    bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietLogger() }),
  ]);
  const paths = { retrysafe: join(dataDir, 'retrysafe-bundle.js'), baseline: join(dataDir, 'baseline-bundle.js') };
  writeFileSync(paths.retrysafe, retrysafe.code);
  writeFileSync(paths.baseline, baseline.code);
  return { ...paths, ms: performance.now() - started };
}

export interface StackOptions {
  /** Where this engine's SQLite file goes. */
  dataDir: string;
  /** LOG_LEVEL of every child. */
  logLevel: string;
  /** Extra node flags per child name (e.g. --cpu-prof for the API). */
  execArgv?: Record<string, string[]>;
  /** Also start a second API with RETRYSAFE_CACHE_SIZE=0 (replays without the cache). */
  noCacheApi: boolean;
  sandboxes: Promise<Sandboxes>;
  bundles: Promise<Bundles>;
  /** Names of tuning settings to leave out (the ablation); none for the run proper. */
  without?: readonly string[];
  /** More of the APIs' environment (API keys, tenant limits for the overload section). */
  apiEnv?: Record<string, string>;
  log: (line: string) => void;
}

export interface Stack {
  temporal: { address: string; pid: number; bin: string; version: string; argv: string[]; dbFile: string };
  client: Client;
  urls: { api: string; apiNoCache?: string; plain: string; bank: string; reservations: string };
  taskQueues: { retrysafe: string; baseline: string };
  /** Process ids by role, for /proc accounting (the sandboxes' included). */
  pids: Record<string, number>;
  /** Stops this engine (not the sandboxes, which it borrowed). */
  stop(): Promise<{ journalMode: string | undefined }>;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const { dataDir, log } = opts;
  mkdirSync(dataDir, { recursive: true });
  const supervisor = new Supervisor();
  let connection: Connection | undefined;
  const stopAll = async () => {
    await connection?.close().catch(() => undefined);
    await supervisor.stopAll();
  };

  try {
    const bin = ensureTemporalCli();
    const version = temporalCliVersion(bin);
    const dbFile = join(dataDir, 'temporal.db');
    const [port, apiPort, apiNoCachePort] = await Promise.all(Array.from({ length: 3 }, () => freePort()));
    const suffix = Math.random().toString(36).slice(2, 8);
    const taskQueues = { retrysafe: `bench-retrysafe-${suffix}`, baseline: `bench-baseline-${suffix}` };
    const without = opts.without ?? [];
    log(
      `starting Temporal (${version.split('\n')[0]}) on 127.0.0.1:${port} with the SQLite file ${relative(ROOT, dbFile)}` +
        (without.length ? `, without: ${without.join(', ')}` : ''),
    );
    // Registered first, so that it is stopped last.
    const server = await startDevServerWithout(
      { bin, dbFile, port: port!, headless: true, logLevel: 'warn', retentionMs: 24 * 3600_000, supervisor },
      without,
    );
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const stack: StackDescription = {
      temporal: { address: server.address, namespace: 'default' },
      taskQueue: taskQueues.retrysafe,
      // Its own file, should a tenant limit be configured: never the repository's .data/limits.db.
      api: { host: '127.0.0.1', limitsDb: join(dataDir, 'limits.db') },
    };
    const part = (name: string, entry: string, env: Record<string, string>, ready: Probe) =>
      supervisor.add(benchProcess(name, entry, { LOG_LEVEL: opts.logLevel, ...env }, ready, opts.execArgv?.[name] ?? []));

    const apiEnv = (port: number, extra: Record<string, string> = {}) =>
      partEnv({ ...stack, api: { ...stack.api, port } }, 'api', { ...opts.apiEnv, ...extra });
    const apis = Promise.all([
      part('api', 'tools/bench/processes/api.ts', apiEnv(apiPort!), lineProbe('bench api listening')).start(),
      ...(opts.noCacheApi
        ? [
            part(
              'apiNoCache',
              'tools/bench/processes/api.ts',
              apiEnv(apiNoCachePort!, { RETRYSAFE_CACHE_SIZE: '0' }),
              lineProbe('bench api listening'),
            ).start(),
          ]
        : []),
    ]);
    apis.catch(() => undefined);
    const [sandboxes, bundles] = await Promise.all([opts.sandboxes, opts.bundles]);
    // Both bench workers (their own entry, not the product's) run on this Temporal and call
    // the shared sandboxes: the fair baseline makes the operations' own calls.
    const workerEnv = {
      ...temporalEnv(stack),
      ...downstreamEnv({ bank: { url: sandboxes.urls.bank }, reservations: { url: sandboxes.urls.reservations } }),
    };
    const workers = Promise.all([
      part(
        'worker',
        'tools/bench/processes/worker.ts',
        {
          ...workerEnv,
          BENCH_WORKER_KIND: 'retrysafe',
          BENCH_TASK_QUEUE: taskQueues.retrysafe,
          BENCH_WORKFLOW_BUNDLE: bundles.retrysafe,
        },
        lineProbe('bench worker ready'),
      ).start(),
      part(
        'baselineWorker',
        'tools/bench/processes/worker.ts',
        {
          ...workerEnv,
          BENCH_WORKER_KIND: 'baseline',
          BENCH_TASK_QUEUE: taskQueues.baseline,
          BENCH_WORKFLOW_BUNDLE: bundles.baseline,
        },
        lineProbe('bench worker ready'),
      ).start(),
    ]);
    await Promise.all([apis, workers]);

    const pids: Record<string, number> = { orchestrator: process.pid, ...sandboxes.pids };
    for (const p of supervisor.parts) pids[p.name] = p.pid!;

    return {
      temporal: { address: server.address, pid: server.part.pid!, bin, version, argv: server.argv, dbFile },
      client,
      urls: {
        api: `http://127.0.0.1:${apiPort}`,
        ...(opts.noCacheApi ? { apiNoCache: `http://127.0.0.1:${apiNoCachePort}` } : {}),
        ...sandboxes.urls,
      },
      taskQueues,
      pids,
      async stop() {
        await stopAll();
        return { journalMode: readJournalMode(dbFile) };
      },
    };
  } catch (err) {
    // Parts still starting are called off by their stop.
    await stopAll();
    throw err;
  }
}

/** What a section that runs a fresh engine per row (the ablation, the overload section) is given. */
export interface RowEngines {
  /** The run's data folder: each row's engine gets a folder of its own under it. */
  dataDir: string;
  logLevel: string;
  sandboxes: Sandboxes;
  bundles: Bundles;
  /** Called with each row's engine once it runs, so an abort can stop it. */
  onEngine: (stack: Stack | undefined) => void;
}

/** One row's engine, on the run's sandboxes and bundles, without the row's settings; announced to `onEngine`. */
export async function startRowEngine(
  opts: RowEngines,
  row: { folder: string; without: readonly string[]; apiEnv?: Record<string, string>; log: (line: string) => void },
): Promise<Stack> {
  const stack = await startStack({
    dataDir: join(opts.dataDir, row.folder),
    logLevel: opts.logLevel,
    noCacheApi: false,
    sandboxes: Promise.resolve(opts.sandboxes),
    bundles: Promise.resolve(opts.bundles),
    without: row.without,
    apiEnv: row.apiEnv,
    log: row.log,
  });
  opts.onEngine(stack);
  return stack;
}

/** The journal mode the dev server left in its file, read back once it has stopped. */
function readJournalMode(dbFile: string): string | undefined {
  try {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      return String(db.pragma('journal_mode', { simple: true }));
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

export function removeDataDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}
