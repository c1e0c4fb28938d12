// `npm run bench`: starts its own stack on loopback (the sandboxes; a Temporal dev server on
// a SQLite file, the API and the workers; with --peers the same checkout on Restate and on
// DBOS Transact against the same sandboxes), warms up, runs the bounded scenarios
// (tools/bench/scenarios/) for every operation type of the registry, reads where the time goes
// from histories, runs the ablation of the server's tuning and the overload section on
// fresh engines, and writes tools/bench/results/<name>.json, <name>.md and <name>.svg (and .png
// when Chromium is there). --overload runs the overload section alone. It stops by itself:
// fixed counts, a time budget per phase, and a hard time limit.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { postgresBinDir } from '../../tools/postgres.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { Accounting } from './accounting.js';
import { latencyChartSvg, renderPng } from './chart.js';
import { httpClient } from './http.js';
import { machineInfo } from './machine.js';
import { hardLimitMs, parseOptions, USAGE, type BenchOptions } from './modes.js';
import { PEER_NAMES, PEERS_DIR, type PeerName } from './peers/index.js';
import { ensurePeersInstalled } from './peers/install.js';
import { startPeer } from './peers/supervised.js';
import { clockHealth } from './proc.js';
import { summarizeProfiles } from './profile.js';
import { markdownReport } from './report/index.js';
import { computeRatios, resultsJson, type BenchResults, type PeerInfo } from './results.js';
import { computeVerdicts } from './verdicts.js';
import { runAblation } from './scenarios/ablation.js';
import { runContention } from './scenarios/contention.js';
import { emptyFinished, finishedOf, type ActivityKind, type BenchContext, type PeerTarget } from './scenarios/context.js';
import { operationsMeasured, runNewOperations, warmUp } from './scenarios/new-operations.js';
import { runOverload } from './scenarios/overload.js';
import { REPLAYED, runReplays } from './scenarios/replays.js';
import { requestFor, seedSandboxes, submit, TENANT } from './scenarios/workload.js';
import { ensureTemporalCli, temporalCliVersion } from '../../tools/temporal-cli.js';
import { downstreamKey } from '../../workflows/identity.js';
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
import { recordedActivityKind, timelineOf, type Timeline } from './timeline.js';
import { historyCost } from './transitions.js';
import { devServerTuning } from './tuning.js';
import { benchWorkerOptions } from './processes/worker-options.js';

function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

/** A finished operation of the replayed type as the API answers it, for the plain endpoint to send back. */
function samplePlainBody(): string {
  const key = 'bench-00000000-replayed-c1-r0-0';
  const workflowId = `${TENANT}/${key}`;
  const last = REPLAYED.steps.at(-1)!;
  return JSON.stringify({
    key,
    type: REPLAYED.type,
    status: 'succeeded',
    step: last.name,
    createdAt: '2025-01-01T00:00:00.000Z',
    completedAt: '2025-01-01T00:00:00.100Z',
    steps: REPLAYED.steps.map((s) => ({
      name: s.name,
      status: 'completed',
      downstreamKey: downstreamKey(workflowId, s.keySuffix),
    })),
    needsAttention: false,
    links: {
      self: `/v1/operations/${key}`,
      temporalUi: `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
    },
    result: Object.fromEntries(
      REPLAYED.steps.flatMap((s) => Object.keys(s.result ?? {})).map((f) => [f, 'id_00000000000000000000000000']),
    ),
  });
}

function packageVersion(dir: string, name: string): string {
  try {
    return (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function peerVersions(peer: PeerName): Record<string, string> {
  if (peer === 'restate') {
    return Object.fromEntries(
      ['@restatedev/restate-server', '@restatedev/restate-sdk'].map((p) => [p, packageVersion(PEERS_DIR, p)]),
    );
  }
  let postgres = 'unknown';
  try {
    postgres = execFileSync(join(postgresBinDir(), 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // reported as unknown
  }
  return { '@dbos-inc/dbos-sdk': packageVersion(PEERS_DIR, '@dbos-inc/dbos-sdk'), postgresql: postgres };
}

function commandLine(opts: BenchOptions): string {
  const flags = [
    ...(opts.mode.name === 'default' ? [] : [`--${opts.mode.name}`]),
    ...(opts.overload === 'only' ? ['--overload'] : []),
    ...(opts.overload === 'none' && opts.mode.overloadByDefault ? ['--no-overload'] : []),
    ...(opts.peers ? ['--peers'] : []),
    ...(opts.overload !== 'only' && opts.ablation !== opts.mode.ablationByDefault
      ? [opts.ablation ? '--ablation' : '--no-ablation']
      : []),
    ...(opts.activityKind === 'auto' ? [] : [`--activity-kind ${opts.activityKind}`]),
    ...(opts.profile ? ['--profile'] : []),
  ];
  return `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`;
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

  /** Writes the results, the report and the chart, and logs the verdicts. */
  const write = async (results: BenchResults) => {
    // The chart shows latency scenarios: the overload section alone has none.
    let png: Awaited<ReturnType<typeof renderPng>> = { ok: false, reason: 'no latency scenarios in this run' };
    if (results.scenarios.length > 0) {
      const svg = latencyChartSvg(results.scenarios, `retrysafe benchmark ${opts.name} (${mode.name})`);
      writeFileSync(join(outDir, `${opts.name}.svg`), svg);
      png = await renderPng(svg, join(outDir, `${opts.name}.png`));
    }
    results.chart = {
      svg: results.scenarios.length > 0 ? `${opts.name}.svg` : '',
      png: png.ok ? `${opts.name}.png` : null,
      pngNote: png.ok ? 'rendered by Chromium' : png.reason,
    };
    results.durationMs = Date.now() - started;
    results.verdicts = computeVerdicts(results);
    const jsonPath = join(outDir, `${opts.name}.json`);
    writeFileSync(jsonPath, resultsJson(results));
    writeFileSync(
      join(outDir, `${opts.name}.md`),
      markdownReport(results, { json: `${opts.name}.json`, svg: `${opts.name}.svg`, png: results.chart.png }),
    );
    for (const v of results.verdicts)
      log(`verdict: ${v.figure}: ${v.now} (target ${v.target}, moonshot ${v.moonshot}) → ${v.met}`);
    log(
      `wrote ${relative(ROOT, jsonPath)}, ${opts.name}.md${results.chart.svg ? `, ${results.chart.svg}` : ''}${png.ok ? `, ${opts.name}.png` : ` (no PNG: ${png.reason})`} in ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${results.machine.loadAverageEnd}`,
    );
  };
  const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const settings = (bundleMs: number, counts: Record<string, unknown>): BenchResults['settings'] => ({
    logLevel: opts.logLevel,
    workerOptions: Object.keys(benchWorkerOptions).length
      ? JSON.stringify(benchWorkerOptions)
      : 'SDK defaults (as worker/main.ts)',
    apiCache: 'RETRYSAFE_CACHE_SIZE 10000, RETRYSAFE_CACHE_TTL 10m (defaults); second API: RETRYSAFE_CACHE_SIZE=0',
    bundleMs,
    batchMaxMs: mode.batchMaxMs,
    profiled: opts.profile,
    counts,
  });
  const temporalOf = (cli: string, argv: string[], dataFs: string): BenchResults['temporal'] => ({
    cli: cli.split('\n')[0]!,
    argv,
    pragmasPassed: argv.flatMap((a, i, all) => (all[i - 1] === '--sqlite-pragma' ? [a] : [])),
    journalMode,
    dataFs,
  });
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
        schema: 3,
        name: opts.name,
        mode: mode.name,
        command: commandLine(opts),
        startedAt,
        durationMs: 0,
        machine,
        temporal: temporalOf(cli, overload.rows[0]?.argv ?? [], machine.dataFs),
        settings: settings(bundles.ms, { overload: mode.overload }),
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
    // One operation of each type end to end before anything is timed: the whole path works,
    // and their histories say which activity kind retrysafe's steps use.
    const recorded = new Set<string>();
    for (const op of operations) {
      const probeKey = `bench-${runId}-probe-${op.own}`;
      const probe = await submit(http, engine.urls.api, op.own, probeKey, requestFor(op.own));
      if (probe.operation.status !== 'succeeded')
        throw new Error(`probe ${op.own} did not succeed: ${JSON.stringify(probe.operation)}`);
      const probeHistory = await engine.client.workflow.getHandle(`${TENANT}/${probeKey}`).fetchHistory();
      recorded.add(recordedActivityKind(probeHistory.events ?? []));
    }
    const detected = recorded.size === 1 ? [...recorded][0]! : 'mixed';
    let activityKind: ActivityKind;
    let how: string;
    if (opts.activityKind !== 'auto') {
      activityKind = opts.activityKind;
      how = `--activity-kind ${opts.activityKind} (the probe operations' histories showed ${detected})`;
    } else if (detected === 'regular' || detected === 'local') {
      activityKind = detected;
      how = "read off the probe operations' histories";
    } else {
      throw new Error(
        `the probe operations' histories show ${[...recorded].join(', ')} activities: say which baseline R1 compares with (--activity-kind regular|local)`,
      );
    }
    ctx.activityKind = activityKind;
    log(`retrysafe's steps run as ${activityKind} activities (${how}): the no-op baseline uses the same kind`);

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
    // Operations through the API are recorded by key; everything else by workflow ID.
    const owns = new Set(operations.map((o) => o.own));
    const ids = (kind: string) => (owns.has(kind) ? finishedOf(ctx, kind).map((k) => `${TENANT}/${k}`) : finishedOf(ctx, kind));
    const history = [];
    const historyKinds = [
      ...operations.map((o) => o.own),
      ...operations.map((o) => o.fair!),
      ...operations.map((o) => o.bare),
      ...operations.map((o) => o.tracked),
    ];
    for (const kind of new Set(historyKinds)) {
      if (ids(kind).length > 0) history.push(await historyCost(engine.client, kind, ids(kind), mode.transitionSample));
    }
    const timeline: Timeline[] = [];
    const lowest = `-c${Math.min(...mode.concurrencies)}-`;
    const bySteps = [...operations].sort((a, b) => b.activities - a.activities);
    for (const kind of new Set(bySteps.flatMap((o) => [o.own, o.bare, o.fair!]))) {
      const sample = ids(kind).filter((id) => id.includes(lowest));
      if (sample.length > 0) timeline.push(await timelineOf(engine.client, kind, sample, mode.timelineSample));
    }
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
      schema: 3,
      name: opts.name,
      mode: mode.name,
      command: commandLine(opts),
      startedAt,
      durationMs: 0,
      machine,
      temporal: temporalOf(engine.temporal.version, mainArgv, machine.dataFs),
      settings: settings(bundles.ms, {
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
      activityKind: { used: activityKind, detected, how },
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
