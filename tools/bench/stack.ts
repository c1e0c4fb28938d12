// The bench's own stack, as a user runs it, through the repository's one supervisor, in two
// layers: the sandboxes (bank, reservations, the plain replay endpoint), started once per run
// and shared by everything that checks out, the peers included; and an engine on top of them:
// a Temporal dev server on a SQLite file (tools/dev-server.ts, or the same server without some
// of its tuning for the ablation and the overload section), the API as a `node --import tsx`
// process, and two workers (retrysafe's, and the baselines' with the real activities beside
// the no-op one) with bundles built once per run. An engine can be stopped and another
// started on the same sandboxes. Everything listens on 127.0.0.1 and stops in reverse order:
// the APIs first, Temporal last (so SQLite closes cleanly).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import Database from 'better-sqlite3';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../worker/create.js';
import { startDevServer } from '../dev-server.js';
import { quietLogger } from '../quiet-logger.js';
import { downstreamEnv, loopbackUrl, PART_ENTRY, partEnv, temporalEnv, type StackDescription } from '../stack-env.js';
import type { PartSpec } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import { httpProbe, lineProbe, type Probe } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli, temporalCliVersion } from '../temporal-cli.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The baselines' workflows, bundled apart from retrysafe's. */
export const BASELINE_WORKFLOWS = fileURLToPath(new URL('./baseline/workflows.ts', import.meta.url));

/** A Node process of the bench: this process's environment without any cluster or retrysafe settings, then `env`. */
export function benchProcess(name: string, entry: string, env: Record<string, string>, ready: Probe) {
  return {
    name,
    command: { entry },
    env: { LOG_PRETTY: '0', ...env },
    unsetEnv: [/^TEMPORAL_/, /^RETRYSAFE_/],
    ready,
    keepLines: 500,
  } satisfies PartSpec;
}

/** Adds a bench process to `supervisor` at `logLevel`. */
const adder =
  (supervisor: Supervisor, logLevel: string) => (name: string, entry: string, env: Record<string, string>, ready: Probe) =>
    supervisor.add(benchProcess(name, entry, { LOG_LEVEL: logLevel, ...env }, ready));

export interface Sandboxes {
  urls: { bank: string; reservations: string; plain: string };
  /** Process ids by role, for /proc accounting. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

export async function startSandboxes(opts: { dataDir: string; logLevel: string; plainBody: string }): Promise<Sandboxes> {
  mkdirSync(opts.dataDir, { recursive: true });
  const supervisor = new Supervisor();
  const [bank, reservations, plain] = await Promise.all([freePort(), freePort(), freePort()]);
  const places: StackDescription = {
    bank: { host: '127.0.0.1', port: bank, db: join(opts.dataDir, 'bank.db') },
    reservations: { host: '127.0.0.1', port: reservations, db: join(opts.dataDir, 'reservations.db') },
  };
  const urls = { bank: loopbackUrl(bank), reservations: loopbackUrl(reservations), plain: loopbackUrl(plain) };
  const part = adder(supervisor, opts.logLevel);
  try {
    await Promise.all([
      ...(['bank', 'reservations'] as const).map((name) =>
        part(name, PART_ENTRY[name], partEnv(places, name), httpProbe(`${urls[name]}/healthz`)).start(),
      ),
      part(
        'plain',
        'tools/bench/processes/plain.ts',
        { BENCH_PLAIN_PORT: String(plain), BENCH_PLAIN_BODY: opts.plainBody },
        lineProbe('bench plain listening'),
      ).start(),
    ]);
  } catch (err) {
    await supervisor.stopAll();
    throw err;
  }
  return { urls, pids: Object.fromEntries(supervisor.parts.map((p) => [p.name, p.pid!])), stop: () => supervisor.stopAll() };
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
  logLevel: string;
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
  temporal: { address: string; version: string; argv: string[] };
  client: Client;
  urls: { api: string; apiNoCache?: string; plain: string; bank: string; reservations: string };
  taskQueues: { retrysafe: string; baseline: string };
  /** Process ids by role, for /proc accounting (the sandboxes' included). */
  pids: Record<string, number>;
  /** Stops this engine (not the sandboxes, which it borrowed); answers the journal mode SQLite was left in. */
  stop(): Promise<{ journalMode: string | undefined }>;
}

/** The APIs and both workers of an engine, on `temporal` and the sandboxes. */
async function startApps(
  opts: StackOptions,
  supervisor: Supervisor,
  stack: StackDescription,
  taskQueues: Stack['taskQueues'],
): Promise<Stack['urls']> {
  const part = adder(supervisor, opts.logLevel);
  const [apiPort, noCachePort] = [await freePort(), await freePort()];
  const api = (name: string, port: number, extra: Record<string, string> = {}) => {
    const env = partEnv({ ...stack, api: { ...stack.api, port } }, 'api', { ...opts.apiEnv, ...extra });
    return part(name, 'tools/bench/processes/api.ts', env, lineProbe('bench api listening')).start();
  };
  const apis = Promise.all([
    api('api', apiPort),
    ...(opts.noCacheApi ? [api('apiNoCache', noCachePort, { RETRYSAFE_CACHE_SIZE: '0' })] : []),
  ]);
  apis.catch(() => undefined);
  const [sandboxes, bundles] = await Promise.all([opts.sandboxes, opts.bundles]);
  // Both workers run the bench's own entry, on this Temporal, calling the shared sandboxes.
  const worker = (name: string, kind: 'retrysafe' | 'baseline') =>
    part(
      name,
      'tools/bench/processes/worker.ts',
      {
        ...temporalEnv(stack),
        ...downstreamEnv({ bank: { url: sandboxes.urls.bank }, reservations: { url: sandboxes.urls.reservations } }),
        ...{ BENCH_WORKER_KIND: kind, BENCH_TASK_QUEUE: taskQueues[kind], BENCH_WORKFLOW_BUNDLE: bundles[kind] },
      },
      lineProbe('bench worker ready'),
    ).start();
  await Promise.all([apis, worker('worker', 'retrysafe'), worker('baselineWorker', 'baseline')]);
  return {
    api: loopbackUrl(apiPort),
    ...(opts.noCacheApi ? { apiNoCache: loopbackUrl(noCachePort) } : {}),
    ...sandboxes.urls,
  };
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  mkdirSync(opts.dataDir, { recursive: true });
  const supervisor = new Supervisor();
  let connection: Connection | undefined;
  const stopAll = async () => {
    await connection?.close().catch(() => undefined);
    await supervisor.stopAll();
  };
  try {
    const bin = ensureTemporalCli();
    const version = temporalCliVersion(bin);
    const dbFile = join(opts.dataDir, 'temporal.db');
    const port = await freePort();
    const without = opts.without ?? [];
    opts.log(
      `starting Temporal (${version.split('\n')[0]}) on 127.0.0.1:${port} with the SQLite file ${relative(ROOT, dbFile)}` +
        (without.length ? `, without: ${without.join(', ')}` : ''),
    );
    // Registered first, so that it is stopped last.
    const server = await startDevServer({
      bin,
      dbFile,
      port,
      headless: true,
      logLevel: 'warn',
      retentionMs: 86_400_000,
      supervisor,
      without,
    });
    connection = await Connection.connect({ address: server.address });
    const suffix = Math.random().toString(36).slice(2, 8);
    const taskQueues = { retrysafe: `bench-retrysafe-${suffix}`, baseline: `bench-baseline-${suffix}` };
    const urls = await startApps(
      opts,
      supervisor,
      {
        temporal: { address: server.address, namespace: 'default' },
        taskQueue: taskQueues.retrysafe,
        // Its own file, should a tenant limit be configured: never the repository's .data/limits.db.
        api: { host: '127.0.0.1', limitsDb: join(opts.dataDir, 'limits.db') },
      },
      taskQueues,
    );
    const sandboxPids = (await opts.sandboxes).pids;
    return {
      temporal: { address: server.address, version, argv: server.argv },
      client: new Client({ connection, namespace: 'default' }),
      urls,
      taskQueues,
      pids: { orchestrator: process.pid, ...sandboxPids, ...Object.fromEntries(supervisor.parts.map((p) => [p.name, p.pid!])) },
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
  /** Called with each row's engine once it runs (and undefined once it stopped), so an abort can stop it. */
  onEngine: (stack: Stack | undefined) => void;
  log: (line: string) => void;
}

/** Runs `body` on one row's engine (the run's sandboxes and bundles, without the row's settings), then stops it. */
export async function onRowEngine<T>(
  opts: RowEngines,
  row: { folder: string; without: readonly string[]; apiEnv?: Record<string, string> },
  body: (stack: Stack) => Promise<T>,
): Promise<T> {
  const stack = await startStack({
    ...row,
    dataDir: join(opts.dataDir, row.folder),
    logLevel: opts.logLevel,
    noCacheApi: false,
    sandboxes: Promise.resolve(opts.sandboxes),
    bundles: Promise.resolve(opts.bundles),
    log: opts.log,
  });
  opts.onEngine(stack);
  try {
    return await body(stack);
  } finally {
    await stack.stop();
    opts.onEngine(undefined);
  }
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
