// `npm run bench`: starts its own stack on loopback (the sandboxes; a Temporal dev server on
// a SQLite file, the API and the workers; with --peers the same checkout on Restate and on
// DBOS Transact against the same sandboxes), warms up, runs the bounded scenarios
// (tools/bench/scenarios/) for every operation type of the registry, reads where the time goes
// from histories, runs the ablation of the server's tuning and the overload section on
// fresh engines, and writes tools/bench/results/<name>.json, <name>.md and <name>.svg (and .png
// when Chromium is there). --overload runs the overload section alone. It stops by itself:
// fixed counts, a time budget per phase, and a hard time limit.
import { cpSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli, temporalCliVersion } from '../temporal-cli.js';
import { Accounting } from './accounting.js';
import { httpClient } from './http.js';
import { machineInfo } from './machine.js';
import { hardLimitMs, parseOptions, USAGE, type BenchOptions } from './modes.js';
import { PEER_NAMES } from './peers/index.js';
import { ensurePeersInstalled } from './peers/install.js';
import { startPeer } from './peers/supervised.js';
import { clockHealth } from './proc.js';
import { summarizeProfiles } from './profile.js';
import { computeRatios, type BenchResults, type PeerInfo } from './results.js';
import { loadAverage, peerVersions, resultsHead, settingsOf, temporalOf } from './run-facts.js';
import { runAblation } from './scenarios/ablation.js';
import { runContention } from './scenarios/contention.js';
import { emptyFinished, type BenchContext, type PeerTarget } from './scenarios/context.js';
import { readHistories } from './scenarios/histories.js';
import { operationsMeasured, runNewOperations, warmUp } from './scenarios/new-operations.js';
import { runOverload } from './scenarios/overload.js';
import { probeActivityKind } from './scenarios/probe.js';
import { runReplays, samplePlainBody } from './scenarios/replays.js';
import { seedSandboxes } from './scenarios/workload.js';
import {
  bundleWorkflows,
  removeDataDir,
  ROOT,
  startSandboxes,
  startStack,
  type Bundles,
  type Sandboxes,
  type Stack,
} from './stack.js';
import { timeWorkerStartup } from './startup.js';
import { devServerTuning } from './tuning.js';
import { writeResults } from './write-results.js';

function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

async function run(opts: BenchOptions): Promise<void> {
  // Before the clock starts: the first --peers run downloads the peers' packages.
  if (opts.peers) ensurePeersInstalled(log);
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const runId = Math.random().toString(36).slice(2, 10);
  const dataDir = resolve(ROOT, '.data', `bench-${runId}`);
  const profileDir = join(dataDir, 'profiles');
  const outDir = resolve(opts.outDir);
  mkdirSync(outDir, { recursive: true });
  const mode = opts.mode;
  const limitMs = hardLimitMs(opts);
  const extras = [
    ...(opts.peers ? ['the peers'] : []),
    ...(opts.ablation ? ['the ablation'] : []),
    ...(opts.overload === 'also' ? ['the overload section'] : []),
  ];
  log(
    `mode ${mode.name}${opts.overload === 'only' ? ', the overload section alone' : extras.length ? ` with ${extras.join(', ')}` : ''}; data in ${relative(ROOT, dataDir)}; ` +
      `results to ${relative(ROOT, outDir) || '.'}/${opts.name}.*; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );

  const execArgv: Record<string, string[]> = {};
  if (opts.profile) {
    for (const name of ['api', 'worker']) execArgv[name] = ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)];
  }
  const tuning = devServerTuning();

  // Everything started is stopped in reverse order (an ablation engine, the run's engine,
  // the peers, the sandboxes), on success, failure, signal or time limit.
  let sandboxes: Sandboxes | undefined;
  let stack: Stack | undefined;
  let rowStack: Stack | undefined;
  let journalMode: string | undefined;
  const peerSupervisor = new Supervisor();
  const http = httpClient(64);
  const stopEngine = async () => {
    const s = stack;
    stack = undefined;
    if (s) ({ journalMode } = await s.stop());
  };
  let stopping: Promise<void> | undefined;
  const stopEverything = () =>
    (stopping ??= (async () => {
      http.close();
      const steps = [() => rowStack?.stop(), stopEngine, () => peerSupervisor.stopAll(), () => sandboxes?.stop()];
      for (const step of steps)
        await Promise.resolve(step()).catch((err: unknown) => console.error(`bench: stopping: ${String(err)}`));
    })());
  const abandon = (code: number) =>
    void stopEverything().finally(() => {
      if (!opts.keepData) removeDataDir(dataDir);
      process.exit(code);
    });
  const hardLimit = setTimeout(() => {
    console.error(`bench: over its time limit (${(limitMs / 60_000).toFixed(1)} min): stopping`);
    abandon(2);
  }, limitMs);
  hardLimit.unref();
  process.once('SIGINT', () => (console.error('bench: SIGINT, stopping the stack'), abandon(130)));
  process.once('SIGTERM', () => (console.error('bench: SIGTERM, stopping the stack'), abandon(130)));

  const overloadPhase = (sb: Sandboxes, bundles: Bundles) => {
    const o = mode.overload;
    log(
      `overload: a tenant floods at c=${o.floods.join(', ')} while another sends one at a time ` +
        `(3 configurations, at most ${(o.budgetMs / 60_000).toFixed(0)} min)`,
    );
    return runOverload({
      runId,
      dataDir,
      logLevel: opts.logLevel,
      sandboxes: sb,
      bundles,
      counts: o,
      http,
      log,
      onEngine: (s) => (rowStack = s),
    });
  };

  const write = (results: BenchResults) => writeResults(results, { outDir, started, log });

  try {
    const sandboxesStarting = startSandboxes({ dataDir, logLevel: opts.logLevel, plainBody: samplePlainBody(), execArgv }).then(
      (s) => (sandboxes = s),
    );
    const bundlesBuilding = bundleWorkflows(dataDir);

    if (opts.overload === 'only') {
      const starts = await Promise.allSettled([sandboxesStarting, bundlesBuilding]);
      for (const start of starts) if (start.status === 'rejected') throw start.reason;
      const [sb, bundles] = [await sandboxesStarting, await bundlesBuilding];
      const cli = temporalCliVersion(ensureTemporalCli());
      const machine = machineInfo(cli, dataDir);
      const overload = await overloadPhase(sb, bundles);
      machine.clock.end = clockHealth();
      machine.loadAverageEnd = loadAverage();
      await stopEverything();
      await write({
        ...resultsHead(opts, startedAt, machine),
        temporal: temporalOf(cli, overload.rows[0]?.argv ?? [], machine.dataFs, journalMode),
        settings: settingsOf(opts, bundles.ms, { overload: mode.overload }),
        ratios: [],
        skipped: overload.skipped.map((row) => `overload: ${row}`),
        scenarios: [],
        contention: [],
        history: [],
        startup: null,
        profiles: [],
        chart: { svg: '', png: null, pngNote: '' },
        tuning: { source: tuning.source, settings: [...tuning.settings] },
        peers: null,
        verdicts: [],
        ablation: null,
        operations: [],
        overload,
      });
      return;
    }

    // The peers need the sandboxes only: they start while Temporal does.
    const peersStarting = sandboxesStarting.then((sb) => {
      if (!opts.peers) return [];
      log(`starting the peers: ${PEER_NAMES.join(', ')}`);
      return Promise.all(
        PEER_NAMES.map((peer) =>
          startPeer(peerSupervisor, peer, {
            dataDir: join(dataDir, 'peers', peer),
            bankUrl: sb.urls.bank,
            reservationsUrl: sb.urls.reservations,
            logLevel: opts.logLevel,
          }),
        ),
      );
    });
    const stackStarting = startStack({
      dataDir,
      logLevel: opts.logLevel,
      execArgv,
      noCacheApi: mode.concurrencies.some((c) => mode.uncachedReplays(c) > 0),
      sandboxes: sandboxesStarting,
      bundles: bundlesBuilding,
      log,
    }).then((s) => (stack = s));
    // Settled, not raced: whatever did start is known to the stop before a failure is thrown.
    const starts = await Promise.allSettled([stackStarting, peersStarting, bundlesBuilding]);
    for (const start of starts) if (start.status === 'rejected') throw start.reason;
    const peers = await peersStarting;
    const bundles = await bundlesBuilding;
    if (!stack || !sandboxes) throw new Error('the stack did not start');
    const engine: Stack = stack;

    const machine = machineInfo(engine.temporal.version, dataDir);
    const apiUrls = [engine.urls.api, ...(engine.urls.apiNoCache ? [engine.urls.apiNoCache] : [])];
    const peerTargets: PeerTarget[] = peers.map((p) => ({ peer: p.stack.peer, checkoutUrl: p.stack.checkoutUrl }));
    const peerPids = Object.fromEntries(peerSupervisor.parts.map((p) => [p.name, p.pid!]));
    const ctx: BenchContext = {
      stack: engine,
      mode,
      runId,
      http,
      accounting: new Accounting({ ...engine.pids, ...peerPids }, http, apiUrls, new Set(['postgres'])),
      log,
      phaseStartedAt: performance.now(),
      activityKind: 'regular',
      peers: peerTargets,
      skipped: [],
      finished: emptyFinished(),
      charges: new Map(),
    };
    await seedSandboxes(ctx);
    const operations = operationsMeasured();
    const activityKind = await probeActivityKind(ctx, operations, opts.activityKind);
    ctx.activityKind = activityKind.used;
    log(`retrysafe's steps run as ${activityKind.used} activities (${activityKind.how}): the no-op baseline uses the same kind`);

    log(`warming up (${mode.warmupOps} of each kind)`);
    await warmUp(ctx);
    log(
      `new operations (${operations.map((o) => o.own).join(', ')}) vs bare Temporal${peerTargets.length ? ' and the peers' : ''}`,
    );
    const newOps = await runNewOperations(ctx);
    log('replays vs the plain endpoint' + (peerTargets.length ? " and the peers' replays" : ''));
    const replays = await runReplays(ctx);
    log(`contention: ${mode.contentionRequests} identical requests for one new key`);
    const contention = await runContention(ctx);
    log('state transitions, history and where the time goes');
    const { history, timeline } = await readHistories(ctx, operations);
    let startup: BenchResults['startup'] = null;
    if (mode.startupRuns > 0) {
      log(`worker start-up (worker/main.ts, ${mode.startupRuns} times)`);
      startup = await timeWorkerStartup(engine.temporal.address, mode.startupRuns, runId);
    }
    machine.clock.end = clockHealth();
    const peerInfo: PeerInfo[] | null = opts.peers
      ? peers.map((p) => ({
          peer: p.stack.peer,
          durability: p.stack.durability,
          versions: peerVersions(p.stack.peer),
          processes: p.parts.map((part) => part.name),
        }))
      : null;
    const mainArgv = engine.temporal.argv;
    // The ablation and the overload section get the machine to themselves: the run's engine
    // and the peers stop first.
    await stopEngine();
    await peerSupervisor.stopAll();

    let ablation: BenchResults['ablation'] = null;
    if (opts.ablation) {
      log(`ablation of the server's tuning (${tuning.settings.length} settings, at most ${mode.ablation.budgetMs / 60_000} min)`);
      ablation = await runAblation(ctx, {
        dataDir,
        logLevel: opts.logLevel,
        sandboxes,
        bundles,
        tuning,
        counts: mode.ablation,
        onEngine: (s) => (rowStack = s),
      });
    }
    const overload = opts.overload === 'also' ? await overloadPhase(sandboxes, bundles) : null;
    machine.loadAverageEnd = loadAverage();
    await stopEverything();
    const profiles = opts.profile ? summarizeProfiles(profileDir) : [];
    if (opts.profile) cpSync(profileDir, join(outDir, 'profiles', opts.name), { recursive: true });

    const scenarios = [...newOps, ...replays];
    await write({
      ...resultsHead(opts, startedAt, machine),
      temporal: temporalOf(engine.temporal.version, mainArgv, machine.dataFs, journalMode),
      settings: settingsOf(opts, bundles.ms, {
        concurrencies: mode.concurrencies,
        rounds: mode.rounds,
        opsPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.ops(c)])),
        replaysPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.replays(c)])),
        checkoutReplaysPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.checkoutReplays(c)])),
        ...(opts.peers ? { peerOpsPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.peerOps(c)])) } : {}),
        warmup: mode.warmupOps,
        contention: `${mode.contentionRequests} × ${mode.contentionTrials} trials per type`,
        ...(overload ? { overload: mode.overload } : {}),
      }),
      ratios: computeRatios(scenarios, mode.concurrencies, operations),
      skipped: [...ctx.skipped, ...(overload?.skipped.map((row) => `overload: ${row}`) ?? [])],
      scenarios,
      contention,
      history,
      startup,
      profiles,
      chart: { svg: '', png: null, pngNote: '' },
      activityKind,
      tuning: { source: tuning.source, settings: [...tuning.settings] },
      peers: peerInfo,
      verdicts: [],
      timeline,
      ablation,
      operations,
      overload,
    });
  } finally {
    await stopEverything();
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
