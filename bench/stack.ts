// The bench's own stack, as a user runs it, through the repository's one supervisor: a
// Temporal dev server on a SQLite file (common/dev-server.ts), the sandboxes and the API as
// `node --import tsx <entry>` processes, and two worker processes (retrysafe and the bare
// baseline) with prebuilt bundles. Everything listens on 127.0.0.1 and stop() stops it in
// reverse order: the APIs first, Temporal last (so SQLite closes cleanly).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import Database from 'better-sqlite3';
import { startDevServer } from '../common/dev-server.js';
import type { PartSpec } from '../common/supervisor/part.js';
import { freePort } from '../common/supervisor/ports.js';
import { httpProbe, lineProbe, type Probe } from '../common/supervisor/ready.js';
import { Supervisor } from '../common/supervisor/supervisor.js';
import { ensureTemporalCli, temporalCliVersion } from '../scripts/temporal-cli.js';
import { WORKFLOW_BUNDLE_OPTIONS } from '../worker/create.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASELINE_WORKFLOWS = fileURLToPath(new URL('./baseline/workflows.ts', import.meta.url));

export interface StackOptions {
  dataDir: string;
  /** LOG_LEVEL of every child. */
  logLevel: string;
  /** Extra node flags per child name (e.g. --cpu-prof for the API). */
  execArgv?: Record<string, string[]>;
  /** Also start a second API with RETRYSAFE_CACHE_SIZE=0 (replays without the cache). */
  noCacheApi: boolean;
  /** Body the plain replay baseline answers with. */
  plainBody: string;
  log: (line: string) => void;
}

export interface Stack {
  temporal: { address: string; pid: number; bin: string; version: string; argv: string[]; dbFile: string };
  client: Client;
  urls: { api: string; apiNoCache?: string; plain: string; bank: string; reservations: string };
  taskQueues: { retrysafe: string; baseline: string };
  /** Process ids by role, for /proc accounting. */
  pids: Record<string, number>;
  bundleMs: number;
  stop(): Promise<{ journalMode: string | undefined }>;
}

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

const quietBundler = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

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
    const [port, bankPort, reservationsPort, plainPort, apiPort, apiNoCachePort] = await Promise.all(
      Array.from({ length: 6 }, () => freePort()),
    );
    const bank = `http://127.0.0.1:${bankPort}`;
    const reservations = `http://127.0.0.1:${reservationsPort}`;
    const plain = `http://127.0.0.1:${plainPort}`;
    const suffix = Math.random().toString(36).slice(2, 8);
    const taskQueues = { retrysafe: `bench-retrysafe-${suffix}`, baseline: `bench-baseline-${suffix}` };

    log(
      `starting Temporal (${version.split('\n')[0]}) on 127.0.0.1:${port} with the SQLite file ${relative(ROOT, dbFile)}, the sandboxes and the plain endpoint; bundling the workflows`,
    );
    const bundleStarted = performance.now();
    const bundles = Promise.all([
      bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quietBundler }),
      bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietBundler }),
    ]).then((b) => ({ bundles: b, ms: performance.now() - bundleStarted }));
    // Registered first, so that it is stopped last.
    const temporal = startDevServer({
      bin,
      dbFile,
      port: port!,
      headless: true,
      logLevel: 'warn',
      retentionMs: 24 * 3600_000,
      supervisor,
    });
    const part = (name: string, entry: string, env: Record<string, string>, ready: Probe) =>
      supervisor.add(benchProcess(name, entry, { LOG_LEVEL: opts.logLevel, ...env }, ready, opts.execArgv?.[name] ?? []));
    // Nothing of these needs Temporal: started alongside it.
    const sideParts = Promise.all([
      part(
        'bank',
        'downstream/bank/server.ts',
        { BANK_HOST: '127.0.0.1', BANK_PORT: String(bankPort), BANK_DB: join(dataDir, 'bank.db') },
        httpProbe(`${bank}/healthz`),
      ).start(),
      part(
        'reservations',
        'downstream/reservations/server.ts',
        {
          RESERVATIONS_HOST: '127.0.0.1',
          RESERVATIONS_PORT: String(reservationsPort),
          RESERVATIONS_DB: join(dataDir, 'reservations.db'),
        },
        httpProbe(`${reservations}/healthz`),
      ).start(),
      part(
        'plain',
        'bench/processes/plain.ts',
        { BENCH_PLAIN_PORT: String(plainPort), BENCH_PLAIN_BODY: opts.plainBody },
        lineProbe('bench plain listening'),
      ).start(),
    ]);
    // Observed here so that a failure is not unhandled while Temporal starts.
    sideParts.catch(() => undefined);
    bundles.catch(() => undefined);

    const server = await temporal;
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const temporalEnv = { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };

    log('starting the APIs and, once bundled, the workers');
    const apiEnv = (p: number, extra: Record<string, string> = {}) => ({
      ...temporalEnv,
      API_HOST: '127.0.0.1',
      API_PORT: String(p),
      RETRYSAFE_TASK_QUEUE: taskQueues.retrysafe,
      ...extra,
    });
    const apis = Promise.all([
      part('api', 'bench/processes/api.ts', apiEnv(apiPort!), lineProbe('bench api listening')).start(),
      ...(opts.noCacheApi
        ? [
            part(
              'apiNoCache',
              'bench/processes/api.ts',
              apiEnv(apiNoCachePort!, { RETRYSAFE_CACHE_SIZE: '0' }),
              lineProbe('bench api listening'),
            ).start(),
          ]
        : []),
    ]);
    apis.catch(() => undefined);

    const {
      bundles: [retrysafeBundle, baselineBundle],
      ms: bundleMs,
    } = await bundles;
    const retrysafeBundlePath = join(dataDir, 'retrysafe-bundle.js');
    const baselineBundlePath = join(dataDir, 'baseline-bundle.js');
    writeFileSync(retrysafeBundlePath, retrysafeBundle!.code);
    writeFileSync(baselineBundlePath, baselineBundle!.code);
    const workers = Promise.all([
      part(
        'worker',
        'bench/processes/worker.ts',
        {
          ...temporalEnv,
          BENCH_WORKER_KIND: 'retrysafe',
          BENCH_TASK_QUEUE: taskQueues.retrysafe,
          BENCH_WORKFLOW_BUNDLE: retrysafeBundlePath,
          BANK_URL: bank,
          RESERVATIONS_URL: reservations,
        },
        lineProbe('bench worker ready'),
      ).start(),
      part(
        'baselineWorker',
        'bench/processes/worker.ts',
        {
          ...temporalEnv,
          BENCH_WORKER_KIND: 'baseline',
          BENCH_TASK_QUEUE: taskQueues.baseline,
          BENCH_WORKFLOW_BUNDLE: baselineBundlePath,
        },
        lineProbe('bench worker ready'),
      ).start(),
    ]);
    await Promise.all([sideParts, apis, workers]);

    const pids: Record<string, number> = { orchestrator: process.pid };
    for (const p of supervisor.parts) pids[p.name] = p.pid!;

    return {
      temporal: { address: server.address, pid: server.part.pid!, bin, version, argv: server.argv, dbFile },
      client,
      urls: {
        api: `http://127.0.0.1:${apiPort}`,
        ...(opts.noCacheApi ? { apiNoCache: `http://127.0.0.1:${apiNoCachePort}` } : {}),
        plain,
        bank,
        reservations,
      },
      taskQueues,
      pids,
      bundleMs,
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
