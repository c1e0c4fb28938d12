// `npm run bench`: starts its own stack on loopback (Temporal dev server on a SQLite file,
// sandboxes, API, workers), warms up, runs the bounded scenarios (bench/scenarios/) and writes
// bench/results/<name>.json, <name>.md and <name>.svg (and .png when Chromium is there).
// It stops by itself: fixed counts, and a hard time limit per mode.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Accounting } from './accounting.js';
import { latencyChartSvg, renderPng } from './chart.js';
import { httpClient } from './http.js';
import { machineInfo } from './machine.js';
import { clockHealth } from './proc.js';
import { parseOptions, USAGE, type BenchOptions } from './modes.js';
import { summarizeProfiles } from './profile.js';
import { markdownReport } from './report.js';
import { computeRatios, resultsJson, type BenchResults } from './results.js';
import { runContention } from './scenarios/contention.js';
import type { BenchContext } from './scenarios/context.js';
import { runNewOperations, warmUp } from './scenarios/new-operations.js';
import { runReplays } from './scenarios/replays.js';
import { checkoutBody, seedSandboxes, submit, TENANT } from './scenarios/workload.js';
import { removeDataDir, ROOT, startStack, type Stack } from './stack.js';
import { timeWorkerStartup } from './startup.js';
import { historyCost } from './transitions.js';
import { benchWorkerOptions } from './processes/worker-options.js';

function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

/** A payment resource as the API answers it, for the plain endpoint to send back. */
function samplePlainBody(): string {
  return JSON.stringify({
    key: 'bench-00000000-payment-c1-r0-0',
    type: 'payment',
    status: 'succeeded',
    step: 'charge_payment',
    createdAt: '2025-01-01T00:00:00.000Z',
    completedAt: '2025-01-01T00:00:00.100Z',
    steps: [{ name: 'charge_payment', status: 'completed', downstreamKey: 'default/bench-00000000-payment-c1-r0-0/charge' }],
    needsAttention: false,
    links: {
      self: '/v1/operations/bench-00000000-payment-c1-r0-0',
      temporalUi: 'http://localhost:8233/namespaces/default/workflows/default%2Fbench-00000000-payment-c1-r0-0',
    },
    result: { chargeId: 'ch_00000000000000000000000000' },
  });
}

async function run(opts: BenchOptions): Promise<void> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const runId = Math.random().toString(36).slice(2, 10);
  const dataDir = resolve(ROOT, '.data', `bench-${runId}`);
  const profileDir = join(dataDir, 'profiles');
  const outDir = resolve(opts.outDir);
  mkdirSync(outDir, { recursive: true });
  const mode = opts.mode;
  log(`mode ${mode.name}; data in ${relative(ROOT, dataDir)}; results to ${relative(ROOT, outDir) || '.'}/${opts.name}.*`);

  const execArgv: Record<string, string[]> = {};
  if (opts.profile) {
    for (const name of ['api', 'worker']) execArgv[name] = ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)];
  }
  const plainBody = samplePlainBody();
  const stack: Stack = await startStack({
    dataDir,
    logLevel: opts.logLevel,
    execArgv,
    noCacheApi: mode.concurrencies.some((c) => mode.uncachedReplays(c) > 0),
    plainBody,
    log,
  });
  const http = httpClient(64);
  let stopped = false;
  const stopStack = async () => {
    if (stopped) return { journalMode: undefined };
    stopped = true;
    http.close();
    return stack.stop();
  };
  const abandon = (code: number) =>
    void stopStack()
      .catch(() => undefined)
      .finally(() => {
        if (!opts.keepData) removeDataDir(dataDir);
        process.exit(code);
      });
  const hardLimit = setTimeout(() => {
    console.error(`bench: over its time limit (${mode.hardLimitMs / 60_000} min): stopping`);
    abandon(2);
  }, mode.hardLimitMs);
  hardLimit.unref();
  const onSignal = (signal: string) => {
    console.error(`bench: ${signal}, stopping the stack`);
    abandon(130);
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));

  try {
    const machine = machineInfo(stack.temporal.version, dataDir);
    const apiUrls = [stack.urls.api, ...(stack.urls.apiNoCache ? [stack.urls.apiNoCache] : [])];
    const ctx: BenchContext = {
      stack,
      mode,
      runId,
      http,
      accounting: new Accounting(stack.pids, http, apiUrls),
      log,
      startedAt: performance.now() - (Date.now() - started),
      skipped: [],
      finished: { payment: [], checkout: [], bare1: [], bare3: [], 'bare1-tracked': [], 'bare3-tracked': [] },
    };
    await seedSandboxes(ctx);
    // One checkout end to end before anything is timed: the whole path works.
    const probe = await submit(http, stack.urls.api, 'checkout', `bench-${runId}-probe`, checkoutBody());
    if (probe.operation.status !== 'succeeded')
      throw new Error(`probe checkout did not succeed: ${JSON.stringify(probe.operation)}`);

    log(`warming up (${mode.warmupOps} of each kind)`);
    await warmUp(ctx);
    log('new operations vs bare Temporal');
    const newOps = await runNewOperations(ctx);
    log('replays vs the plain endpoint');
    const replays = await runReplays(ctx);
    log(`contention: ${mode.contentionRequests} identical requests for one new key`);
    const contention = await runContention(ctx);
    log('state transitions and history');
    const history = [];
    for (const kind of ['payment', 'checkout', 'bare1', 'bare3', 'bare1-tracked', 'bare3-tracked'] as const) {
      const ids =
        kind === 'payment' || kind === 'checkout' ? ctx.finished[kind].map((k) => `${TENANT}/${k}`) : ctx.finished[kind];
      if (ids.length > 0) history.push(await historyCost(stack.client, kind, ids, mode.transitionSample));
    }
    let startup: BenchResults['startup'] = null;
    if (mode.startupRuns > 0 && Date.now() - started > mode.budget.contentionBy + 30_000) {
      ctx.skipped.push('worker start-up');
    } else if (mode.startupRuns > 0) {
      log(`worker start-up (worker/main.ts, ${mode.startupRuns} times)`);
      startup = await timeWorkerStartup(stack.temporal.address, mode.startupRuns, runId);
    }

    machine.clock.end = clockHealth();
    const { journalMode } = await stopStack();
    const profiles = opts.profile ? summarizeProfiles(profileDir) : [];
    if (opts.profile) cpSync(profileDir, join(outDir, 'profiles', opts.name), { recursive: true });

    const scenarios = [...newOps, ...replays];
    const svg = latencyChartSvg(scenarios, `retrysafe benchmark ${opts.name} (${mode.name})`);
    const svgPath = join(outDir, `${opts.name}.svg`);
    writeFileSync(svgPath, svg);
    const pngPath = join(outDir, `${opts.name}.png`);
    const png = await renderPng(svg, pngPath);
    const results: BenchResults = {
      schema: 1,
      name: opts.name,
      mode: mode.name,
      command: `npm run bench${mode.name === 'default' ? '' : ` -- --${mode.name}`}${opts.profile ? ' --profile' : ''}`,
      startedAt,
      durationMs: Date.now() - started,
      machine,
      temporal: {
        cli: stack.temporal.version.split('\n')[0]!,
        argv: stack.temporal.argv,
        pragmasPassed: stack.temporal.argv.flatMap((a, i, all) => (all[i - 1] === '--sqlite-pragma' ? [a] : [])),
        journalMode,
        dataFs: machine.dataFs,
      },
      settings: {
        logLevel: opts.logLevel,
        workerOptions: Object.keys(benchWorkerOptions).length
          ? JSON.stringify(benchWorkerOptions)
          : 'SDK defaults (as worker/main.ts)',
        apiCache: 'RETRYSAFE_CACHE_SIZE 10000, RETRYSAFE_CACHE_TTL 10m (defaults); second API: RETRYSAFE_CACHE_SIZE=0',
        bundleMs: stack.bundleMs,
        batchMaxMs: mode.batchMaxMs,
        profiled: opts.profile,
        counts: {
          concurrencies: mode.concurrencies,
          rounds: mode.rounds,
          opsPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.ops(c)])),
          replaysPerRound: Object.fromEntries(mode.concurrencies.map((c) => [c, mode.replays(c)])),
          warmup: mode.warmupOps,
          contention: `${mode.contentionRequests} × ${mode.contentionTrials} trials per type`,
        },
      },
      ratios: computeRatios(scenarios, mode.concurrencies),
      skipped: ctx.skipped,
      scenarios,
      contention,
      history,
      startup,
      profiles,
      chart: {
        svg: `${opts.name}.svg`,
        png: png.ok ? `${opts.name}.png` : null,
        pngNote: png.ok ? 'rendered by Chromium' : png.reason,
      },
    };
    const jsonPath = join(outDir, `${opts.name}.json`);
    writeFileSync(jsonPath, resultsJson(results));
    writeFileSync(
      join(outDir, `${opts.name}.md`),
      markdownReport(results, { json: `${opts.name}.json`, svg: `${opts.name}.svg`, png: png.ok ? `${opts.name}.png` : null }),
    );
    log(
      `wrote ${relative(ROOT, jsonPath)}, ${opts.name}.md, ${opts.name}.svg${png.ok ? `, ${opts.name}.png` : ` (no PNG: ${png.reason})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  } finally {
    await stopStack();
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
