// The bench's own stack, as a user runs it: a Temporal dev server on a SQLite file (via
// common/dev-server.ts), the sandboxes and the API as `node --import tsx <entry>`
// processes, and two worker processes (retrysafe and the bare baseline) with prebuilt
// bundles. Everything listens on 127.0.0.1 and is stopped by stop(), API first.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';
import { startDevServer, type DevServer } from '../common/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../common/namespace-setup.js';
import { ensureTemporalCli, temporalCliVersion } from '../scripts/temporal-cli.js';
import { WORKFLOWS_PATH } from '../worker/create.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ORPHAN_GUARD = new URL('../scripts/launcher/orphan-guard.mjs', import.meta.url).href;
const BASELINE_WORKFLOWS = fileURLToPath(new URL('./baseline/workflows.ts', import.meta.url));

export interface ChildProcess {
  name: string;
  pid: number;
  output: string[];
  stop(): Promise<void>;
}

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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

/** The child's environment: ours without any cluster settings, plus its own variables. */
function childEnv(own: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('TEMPORAL_') && !k.startsWith('RETRYSAFE_')) env[k] = v;
  }
  return { ...env, LOG_PRETTY: '0', ...own };
}

async function waitUntil(what: string, check: () => Promise<boolean>, exited: () => string | undefined, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(`${what}: ${gone}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `node --import tsx <entry>` and waits until `ready` holds. */
export async function spawnEntry(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: { line: string } | { url: string },
  execArgv: string[] = [],
): Promise<ChildProcess> {
  const child: ResultPromise = execa(process.execPath, [...execArgv, '--import', 'tsx', '--import', ORPHAN_GUARD, entry], {
    cwd: ROOT,
    env: childEnv(env),
    extendEnv: false,
    reject: false,
    cleanup: true,
    buffer: false,
    stdin: 'ignore',
    forceKillAfterDelay: 10_000,
  });
  const output: string[] = [];
  let exited: string | undefined;
  void child.then((r) => {
    exited = `exited (${r.signal ?? `code ${r.exitCode}`}): ${output.slice(-15).join('\n')}`;
  });
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) output.push(line);
    if (output.length > 500) output.splice(0, output.length - 500);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const check =
    'line' in ready
      ? async () => output.some((l) => l.includes(ready.line))
      : async () => (await fetch(ready.url, { signal: AbortSignal.timeout(1000) })).ok;
  try {
    await waitUntil(name, check, () => exited);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    name,
    pid: child.pid!,
    output,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      await child;
    },
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
  const children: ChildProcess[] = [];
  let server: DevServer | undefined;
  let connection: Connection | undefined;
  const stopAll = async () => {
    // API first, then workers, sandboxes, and Temporal last, so SQLite closes cleanly.
    for (const child of [...children].sort((a, b) => stopOrder(a.name) - stopOrder(b.name))) {
      await child.stop().catch(() => undefined);
    }
    await connection?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
  };
  // Children are tracked as soon as they are up, so a failure elsewhere still stops them.
  const track = async (p: Promise<ChildProcess>) => {
    const c = await p;
    children.push(c);
    return c;
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
    const argvOf = (name: string) => opts.execArgv?.[name] ?? [];
    const suffix = Math.random().toString(36).slice(2, 8);
    const taskQueues = { retrysafe: `bench-retrysafe-${suffix}`, baseline: `bench-baseline-${suffix}` };

    log(`starting Temporal (${version.split('\n')[0]}) on 127.0.0.1:${port} with the SQLite file ${relative(ROOT, dbFile)}, the sandboxes and the plain endpoint; bundling the workflows`);
    const bundleStarted = performance.now();
    const bundles = Promise.all([
      bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundler }),
      bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietBundler }),
    ]).then((b) => ({ bundles: b, ms: performance.now() - bundleStarted }));
    // Nothing below needs Temporal: start it all at once.
    const sideParts = Promise.all([
      track(
        spawnEntry(
          'bank',
          'downstream/bank/server.ts',
          { BANK_HOST: '127.0.0.1', BANK_PORT: String(bankPort), BANK_DB: join(dataDir, 'bank.db'), LOG_LEVEL: opts.logLevel },
          { url: `${bank}/healthz` },
          argvOf('bank'),
        ),
      ),
      track(
        spawnEntry(
          'reservations',
          'downstream/reservations/server.ts',
          {
            RESERVATIONS_HOST: '127.0.0.1',
            RESERVATIONS_PORT: String(reservationsPort),
            RESERVATIONS_DB: join(dataDir, 'reservations.db'),
            LOG_LEVEL: opts.logLevel,
          },
          { url: `${reservations}/healthz` },
          argvOf('reservations'),
        ),
      ),
      track(
        spawnEntry(
          'plain',
          'bench/processes/plain.ts',
          { BENCH_PLAIN_PORT: String(plainPort), BENCH_PLAIN_BODY: opts.plainBody },
          { line: 'bench plain listening' },
          argvOf('plain'),
        ),
      ),
    ]);
    // Observed here so that a failure is not unhandled while Temporal starts.
    sideParts.catch(() => undefined);
    bundles.catch(() => undefined);

    server = await startDevServer({ bin, dbFile, port: port!, headless: true, logLevel: 'warn' });
    const pid = server.process.pid!;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1);
    connection = await Connection.connect({ address: server.address });
    await setupNamespace(connection, 'default', { retentionMs: 24 * 3600_000 });
    await waitForSearchAttributes(connection, 'default');
    const client = new Client({ connection, namespace: 'default' });
    const temporalEnv = { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };

    log('starting the APIs and, once bundled, the workers');
    const apiEnv = (p: number, extra: Record<string, string> = {}) => ({
      ...temporalEnv,
      API_HOST: '127.0.0.1',
      API_PORT: String(p),
      RETRYSAFE_TASK_QUEUE: taskQueues.retrysafe,
      LOG_LEVEL: opts.logLevel,
      ...extra,
    });
    const apis = Promise.all([
      track(spawnEntry('api', 'bench/processes/api.ts', apiEnv(apiPort!), { line: 'bench api listening' }, argvOf('api'))),
      ...(opts.noCacheApi
        ? [
            track(
              spawnEntry(
                'apiNoCache',
                'bench/processes/api.ts',
                apiEnv(apiNoCachePort!, { RETRYSAFE_CACHE_SIZE: '0' }),
                { line: 'bench api listening' },
                argvOf('apiNoCache'),
              ),
            ),
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
    const workers = await Promise.all([
      track(
        spawnEntry(
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
          { line: 'bench worker ready' },
          argvOf('worker'),
        ),
      ),
      track(
        spawnEntry(
          'baselineWorker',
          'bench/processes/worker.ts',
          {
            ...temporalEnv,
            BENCH_WORKER_KIND: 'baseline',
            BENCH_TASK_QUEUE: taskQueues.baseline,
            BENCH_WORKFLOW_BUNDLE: baselineBundlePath,
          },
          { line: 'bench worker ready' },
          argvOf('baselineWorker'),
        ),
      ),
    ]);
    const all = [...(await sideParts), ...(await apis), ...workers];

    const pids: Record<string, number> = { temporal: pid, orchestrator: process.pid };
    for (const c of all) pids[c.name] = c.pid;

    return {
      temporal: { address: server.address, pid, bin, version, argv, dbFile },
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
    // Let the children still starting settle into `children` before stopping them all.
    await new Promise((r) => setTimeout(r, 500));
    await stopAll();
    throw err;
  }
}

const STOP_ORDER = ['api', 'apiNoCache', 'plain', 'worker', 'baselineWorker', 'bank', 'reservations'];
function stopOrder(name: string): number {
  const i = STOP_ORDER.indexOf(name);
  return i < 0 ? STOP_ORDER.length : i;
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
