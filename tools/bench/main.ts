// `npm run bench`: starts its own stack on loopback (the sandboxes; a Temporal dev server on a
// SQLite file, the API and the workers; with --peers the same checkout on Restate and on DBOS
// Transact against the same sandboxes), runs the phases below in order for every operation
// type of the registry, and writes tools/bench/results/<name>.json, .md and .svg. The phases on the run's engine come first; the ablation and the
// overload section start engines of their own once it and the peers have stopped. It stops
// by itself: fixed counts, a time budget per phase, and a hard time limit.
//
// A new section of the report is a phase here (it measures, and puts what it measured into
// the results) and a section in ./report.ts (it renders that).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { postgresBinDir } from '../postgres.js';
import { DEV_SERVER_TUNING } from '../dev-server.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli, temporalCliVersion } from '../temporal-cli.js';
import { httpClient } from './load.js';
import { Accounting, clockHealth, type ClockHealth } from './meter.js';
import { commandLine, hardLimitMs, parseOptions, USAGE, type BenchOptions } from './options.js';
import { ensurePeersInstalled, PEER_NAMES, PEERS_DIR, startPeer, type PeerName } from './peers/index.js';
import { runAblation, TUNING_SOURCE } from './phases/ablation.js';
import { runContention } from './phases/contention.js';
import type { BenchContext } from './phases/context.js';
import { readHistories } from './phases/histories.js';
import { operationsMeasured, probeActivityKind, runNewOperations, warmUp } from './phases/operations.js';
import { runOverload } from './phases/overload.js';
import { runReplays, samplePlainBody } from './phases/replays.js';
import { timeWorkerStartup } from './phases/startup.js';
import { writeResults } from './report.js';
import type { BenchResults, MachineInfo } from './results.js';
import { bundleWorkflows, removeDataDir, ROOT, startSandboxes, startStack, type Stack } from './stack.js';
import { seedSandboxes } from './workload.js';

interface Phase {
  /** What the log says as it starts. */
  says: (ctx: BenchContext) => string;
  on: (opts: BenchOptions) => boolean;
  /** `engine`: on the run's engine and the peers; `alone`: on engines of its own, with the machine to itself. */
  needs: 'engine' | 'alone';
  run: (ctx: BenchContext) => Promise<void>;
}

const withEngine = (opts: BenchOptions) => opts.overload !== 'only';
const PHASES: Phase[] = [
  { says: () => 'one operation of each type, end to end', on: withEngine, needs: 'engine', run: probeActivityKind },
  { says: (c) => `warming up (${c.mode.warmupOps} of each kind)`, on: withEngine, needs: 'engine', run: warmUp },
  {
    says: (c) =>
      `new operations (${c.results.operations.map((o) => o.own).join(', ')}) vs bare Temporal${c.peers.length ? ' and the peers' : ''}`,
    ...{ on: withEngine, needs: 'engine', run: runNewOperations },
  },
  {
    says: (c) => `replays vs the plain endpoint${c.peers.length ? " and the peers' replays" : ''}`,
    on: withEngine,
    needs: 'engine',
    run: runReplays,
  },
  {
    says: (c) => `contention: ${c.mode.contentionRequests} identical requests for one new key`,
    on: withEngine,
    needs: 'engine',
    run: runContention,
  },
  { says: () => 'state transitions, history and where the time goes', on: withEngine, needs: 'engine', run: readHistories },
  {
    says: (c) => `worker start-up (worker/main.ts, ${c.mode.startupRuns} times)`,
    ...{ on: (o) => withEngine(o) && o.mode.startupRuns > 0, needs: 'engine', run: timeWorkerStartup },
  },
  {
    says: (c) =>
      `ablation of the server's tuning (${DEV_SERVER_TUNING.length} settings, at most ${c.mode.ablation.budgetMs / 60_000} min)`,
    ...{ on: (o) => o.ablation, needs: 'alone', run: runAblation },
  },
  { says: () => 'the overload section', on: (o) => o.overload !== 'none', needs: 'alone', run: runOverload },
];

function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

const versionIn = (dir: string, name: string) =>
  (JSON.parse(readOr(join(dir, 'node_modules', name, 'package.json'), '{"version":"unknown"}')) as { version: string }).version;

/** The type of the filesystem mounted at the longest prefix of `dir` (/proc/mounts). */
function filesystemOf(dir: string): string {
  const mounts = readOr('/proc/mounts', '')
    .split('\n')
    .map((l) => l.split(' '));
  const under = mounts.filter(([, p]) => p && (dir === p || dir.startsWith(p.endsWith('/') ? p : `${p}/`)));
  const best = under.sort((a, b) => b[1]!.length - a[1]!.length)[0];
  return best ? `${best[2]} (mounted at ${best[1]})` : 'unknown';
}

function machineInfo(temporalCli: string, dataDir: string, clock: ClockHealth): MachineInfo {
  const packages = ['@temporalio/client', '@temporalio/worker', '@temporalio/workflow', 'fastify', 'better-sqlite3', 'tsx'];
  return {
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(readOr('/proc/cpuinfo', ''))?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    loadAverage: loadAverage(),
    node: process.version,
    temporalCli,
    packages: Object.fromEntries(packages.map((p) => [p, versionIn(ROOT, p)])),
    dataFs: filesystemOf(resolve(dataDir)),
    clock: { start: clock },
  };
}

function peerVersions(peer: PeerName): Record<string, string> {
  if (peer === 'restate')
    return Object.fromEntries(['@restatedev/restate-server', '@restatedev/restate-sdk'].map((p) => [p, versionIn(PEERS_DIR, p)]));
  let postgres = 'unknown';
  try {
    postgres = execFileSync(join(postgresBinDir(), 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // reported as unknown
  }
  return { '@dbos-inc/dbos-sdk': versionIn(PEERS_DIR, '@dbos-inc/dbos-sdk'), postgresql: postgres };
}

/** A run's results before any phase: its facts and settings, nothing measured yet. */
function emptyResults(opts: BenchOptions, machine: MachineInfo, bundleMs: number): BenchResults {
  const { mode } = opts;
  const engine = withEngine(opts);
  const counts = {
    ...(engine
      ? { concurrencies: mode.concurrencies, rounds: mode.rounds, opsPerRound: mode.ops, replaysPerRound: mode.replays }
      : {}),
    ...(engine
      ? { checkoutReplaysPerRound: mode.checkoutReplays, ...(opts.peers ? { peerOpsPerRound: mode.peerOps } : {}) }
      : {}),
    ...(engine
      ? { warmup: mode.warmupOps, contention: `${mode.contentionRequests} × ${mode.contentionTrials} trials per type` }
      : {}),
    ...(opts.overload === 'none' ? {} : { overload: mode.overload }),
  };
  return {
    ...{
      schema: 3,
      name: opts.name,
      mode: mode.name,
      command: commandLine(opts),
      startedAt: new Date().toISOString(),
      durationMs: 0,
    },
    machine,
    temporal: {
      cli: machine.temporalCli.split('\n')[0]!,
      argv: [],
      pragmasPassed: [],
      journalMode: undefined,
      dataFs: machine.dataFs,
    },
    settings: {
      ...{ logLevel: opts.logLevel, workerOptions: 'SDK defaults (as worker/main.ts)', bundleMs, batchMaxMs: mode.batchMaxMs },
      apiCache: 'RETRYSAFE_CACHE_SIZE 10000, RETRYSAFE_CACHE_TTL 10m (defaults); second API: RETRYSAFE_CACHE_SIZE=0',
      counts,
    },
    ...{ ratios: [], skipped: [], scenarios: [], contention: [], history: [], startup: null, verdicts: [] },
    chart: { svg: '' },
    tuning: { source: TUNING_SOURCE, settings: DEV_SERVER_TUNING.map(({ name, args, why }) => ({ name, args, why })) },
    ...{ peers: null, ablation: null, operations: engine ? operationsMeasured() : [], overload: null },
  };
}

/** The engine as it ran: its flags, and the journal mode read back after it stopped. */
function recordEngine(results: BenchResults, argv: string[], journalMode: string | undefined): void {
  results.temporal.argv = argv;
  results.temporal.pragmasPassed = argv.flatMap((a, i, all) => (all[i - 1] === '--sqlite-pragma' ? [a] : []));
  results.temporal.journalMode = journalMode;
}

/** Everything the run starts, stopped in reverse order (a row's engine, the run's engine, the peers, the sandboxes) exactly once. */
class Teardown {
  row: Stack | undefined;
  engine: Stack | undefined;
  readonly peers = new Supervisor();
  sandboxes: { stop(): Promise<void> } | undefined;
  journalMode: string | undefined;
  private stopping: Promise<void> | undefined;

  async stopEngine(): Promise<void> {
    const s = this.engine;
    this.engine = undefined;
    if (s) ({ journalMode: this.journalMode } = await s.stop());
  }

  stopAll(): Promise<void> {
    return (this.stopping ??= (async () => {
      for (const step of [
        () => this.row?.stop(),
        () => this.stopEngine(),
        () => this.peers.stopAll(),
        () => this.sandboxes?.stop(),
      ])
        await Promise.resolve(step()).catch((err: unknown) => console.error(`bench: stopping: ${String(err)}`));
    })());
  }
}

/** Starts the sandboxes and the bundles, and the run's engine and the peers when a phase needs them; the context of the phases. */
async function prepare(opts: BenchOptions, down: Teardown, runId: string, dataDir: string): Promise<BenchContext> {
  const needEngine = PHASES.some((p) => p.needs === 'engine' && p.on(opts));
  const http = httpClient(64);
  const sandboxes = startSandboxes({ dataDir, logLevel: opts.logLevel, plainBody: samplePlainBody() }).then(
    (s) => (down.sandboxes = s),
  );
  const bundles = bundleWorkflows(dataDir);
  // The peers need the sandboxes only: they start while Temporal does.
  const peers = sandboxes.then((sb) => {
    if (!needEngine || !opts.peers) return [];
    log(`starting the peers: ${PEER_NAMES.join(', ')}`);
    const peerOpts = (peer: PeerName) => ({
      dataDir: join(dataDir, 'peers', peer),
      bankUrl: sb.urls.bank,
      reservationsUrl: sb.urls.reservations,
      logLevel: opts.logLevel,
    });
    return Promise.all(PEER_NAMES.map((peer) => startPeer(down.peers, peer, peerOpts(peer))));
  });
  const engine = needEngine
    ? startStack({
        dataDir,
        logLevel: opts.logLevel,
        noCacheApi: opts.mode.concurrencies.some((c) => opts.mode.uncachedReplays[c]! > 0),
        sandboxes,
        bundles,
        log,
      }).then((s) => (down.engine = s))
    : undefined;
  // Settled, not raced: whatever did start is known to the teardown before a failure is thrown.
  for (const start of await Promise.allSettled([sandboxes, bundles, peers, engine]))
    if (start.status === 'rejected') throw start.reason;
  const [sb, built, raced, stack] = [await sandboxes, await bundles, await peers, await engine];
  const cli = stack?.temporal.version ?? temporalCliVersion(ensureTemporalCli());
  const results = emptyResults(opts, machineInfo(cli, dataDir, clockHealth()), built.ms);
  if (opts.peers && needEngine)
    results.peers = raced.map((p) => ({
      peer: p.stack.peer,
      durability: p.stack.durability,
      versions: peerVersions(p.stack.peer),
      processes: p.parts.map((part) => part.name),
    }));
  const pids = { ...(stack?.pids ?? sb.pids), ...Object.fromEntries(down.peers.parts.map((p) => [p.name, p.pid!])) };
  const apiUrls = stack ? [stack.urls.api, ...(stack.urls.apiNoCache ? [stack.urls.apiNoCache] : [])] : [];
  return {
    ...{
      opts,
      mode: opts.mode,
      runId,
      http,
      sandboxes: sb,
      bundles: built,
      stack,
      dataDir,
      logLevel: opts.logLevel,
      log,
      results,
    },
    accounting: new Accounting(pids, http, apiUrls, new Set(['postgres'])),
    activityKind: 'regular',
    peers: raced.map((p) => ({ peer: p.stack.peer, checkoutUrl: p.stack.checkoutUrl })),
    ...{ skipped: results.skipped, finished: new Map(), charges: new Map(), phaseStartedAt: 0, onEngine: (s) => (down.row = s) },
  };
}

async function runPhases(ctx: BenchContext, needs: Phase['needs']): Promise<void> {
  for (const phase of PHASES.filter((p) => p.needs === needs && p.on(ctx.opts))) {
    log(phase.says(ctx));
    ctx.phaseStartedAt = performance.now();
    await phase.run(ctx);
  }
}

async function run(opts: BenchOptions): Promise<void> {
  // Before the clock starts: the first --peers run downloads the peers' packages.
  if (opts.peers) ensurePeersInstalled(log);
  const started = Date.now();
  const runId = Math.random().toString(36).slice(2, 10);
  const dataDir = resolve(ROOT, '.data', `bench-${runId}`);
  const outDir = resolve(opts.outDir);
  mkdirSync(outDir, { recursive: true });
  const extras = [
    ...(opts.peers ? ['the peers'] : []),
    ...(opts.ablation ? ['the ablation'] : []),
    ...(opts.overload === 'also' ? ['the overload section'] : []),
  ];
  log(
    `mode ${opts.mode.name}${opts.overload === 'only' ? ', the overload section alone' : extras.length ? ` with ${extras.join(', ')}` : ''}; ` +
      `data in ${relative(ROOT, dataDir)}; results to ${relative(ROOT, outDir) || '.'}/${opts.name}.*; load average ${loadAverage()}`,
  );
  const down = new Teardown();
  const abandon = (code: number, why: string) => {
    console.error(`bench: ${why}: stopping`);
    void down.stopAll().finally(() => {
      if (!opts.keepData) removeDataDir(dataDir);
      process.exit(code);
    });
  };
  const limitMs = hardLimitMs(opts);
  const hardLimit = setTimeout(() => abandon(2, `over its time limit (${(limitMs / 60_000).toFixed(1)} min)`), limitMs).unref();
  process.once('SIGINT', () => abandon(130, 'SIGINT'));
  process.once('SIGTERM', () => abandon(130, 'SIGTERM'));
  try {
    const ctx = await prepare(opts, down, runId, dataDir);
    const { results } = ctx;
    if (ctx.stack) await seedSandboxes(ctx.http, ctx.stack.urls);
    await runPhases(ctx, 'engine');
    if (ctx.stack) results.machine.clock.end = clockHealth();
    const argv = ctx.stack?.temporal.argv;
    ctx.stack = undefined;
    // The ablation and the overload section get the machine to themselves: the run's engine and the peers stop first.
    await down.stopEngine();
    await down.peers.stopAll();
    await runPhases(ctx, 'alone');
    results.machine.clock.end ??= clockHealth();
    results.machine.loadAverageEnd = loadAverage();
    await down.stopAll();
    recordEngine(results, argv ?? results.overload?.rows[0]?.argv ?? [], down.journalMode);
    ctx.http.close();
    writeResults(results, { outDir, started, log });
  } finally {
    await down.stopAll();
    clearTimeout(hardLimit);
    if (!opts.keepData) removeDataDir(dataDir);
  }
}

let options: BenchOptions | 'help';
try {
  options = parseOptions(process.argv.slice(2));
} catch (err) {
  console.error(`bench: ${(err as Error).message}\n\n${USAGE}`);
  process.exit(64);
}
if (options === 'help') {
  console.log(USAGE);
  process.exit(0);
}
run(options).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('bench failed:', err);
    process.exit(1);
  },
);
