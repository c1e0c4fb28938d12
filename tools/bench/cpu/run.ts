// The CPU bench's runs. On a stack: one tuned Temporal dev server and the bench's sandboxes,
// each variant's worker and API (and with --bare the plain-Temporal worker) on its own task
// queue, warmed up, then batches interleaved round by round with every process's CPU time
// read before and after each; the tables, and the profiles' summaries, on stdout. With
// --replay: each variant's own bundle replays one stored history in this process.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, makeTelemetryFilterString, Runtime, Worker, type BundleOptions } from '@temporalio/worker';
import { DEFAULT_HOLD_TTL_SECONDS } from '../../../client/api/config.js';
import { operationRef } from '../../../workflows/identity.js';
import { startDevServer } from '../../dev-server.js';
import { quietLogger } from '../../quiet-logger.js';
import {
  compiledEntry,
  downstreamEnv,
  loopbackUrl,
  PART_ENTRY,
  partEnv,
  temporalEnv,
  type StackDescription,
} from '../../stack-env.js';
import type { PartSpec } from '../../supervisor/part.js';
import { freePort } from '../../supervisor/ports.js';
import { httpProbe, type Probe } from '../../supervisor/ready.js';
import { Supervisor } from '../../supervisor/supervisor.js';
import { ensureTemporalCli } from '../../temporal-cli.js';
import type { BareHttpInput } from '../baseline/workflows.js';
import type { Options, VariantSpec } from '../cpu-per-op.js';
import { closedLoop, httpClient, type HttpClient } from '../load.js';
import { cpuMs } from '../meter.js';
import { summarizeProfiles } from '../profile.js';
import { table } from '../report.js';
import { BASELINE_WORKFLOWS, benchProcess, ROOT, startSandboxes } from '../stack.js';
import { requestFor, seedSandboxes, submit, TENANT } from '../workload.js';
import { BARE, replayReport, report, ROLES, type BatchRecord } from './report.js';

/** The CPU bench's progress on stderr (stdout carries the report). */
const log = (line: string) => console.error(`[cpu ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The folder a variant runs from: the folder named, or the revision unpacked beside the repository's own dependencies; compiled for `:dist`. */
function materialise(spec: VariantSpec): string {
  let root = resolve(ROOT, spec.source);
  if (!existsSync(join(root, 'package.json'))) {
    const sha = execFileSync('git', ['rev-parse', '--verify', `${spec.source}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
    root = join(ROOT, '.data', 'cpu-variants', sha.slice(0, 12));
    if (!existsSync(join(root, 'package.json'))) {
      mkdirSync(root, { recursive: true });
      execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C '${root}'`], { cwd: ROOT });
      symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    }
    log(`variant ${spec.name}: ${spec.source} (${sha.slice(0, 12)}) in ${root}`);
  }
  if (spec.compiled) {
    log(`variant ${spec.name}: compiling (tsc -p tsconfig.build.json)`);
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
  }
  return root;
}

/** Ready once a worker polls `taskQueue`. */
function pollerProbe(client: Client, taskQueue: string): Probe {
  const type = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
  const polled = async () =>
    ((
      await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: type,
      })
    ).pollers?.length ?? 0) > 0;
  return (ctx) => ctx.poll(`a poller on ${taskQueue}`, polled, 250);
}

/** One thing measured: a variant (its API and worker) or the bare baseline (this process as its client, and its worker). */
interface Target {
  name: string;
  /** Process ids by role: api, worker. */
  pids: Record<string, number>;
  run(type: string, key: string): Promise<void>;
}

interface Shared {
  opts: Options;
  runId: string;
  dataDir: string;
  supervisor: Supervisor;
  client: Client;
  http: HttpClient;
  described: StackDescription;
}

/** A process run from a checkout's folder; a product worker bundles its workflows as it starts, so readiness may take minutes. */
function spec(s: Shared, name: string, root: string, entry: string, env: Record<string, string>, ready: Probe): PartSpec {
  const prof = s.opts.cpuProf.includes(name) ? ['--cpu-prof', '--cpu-prof-dir', join(s.dataDir, 'profiles', name)] : [];
  return {
    ...benchProcess(name, join(root, entry), { LOG_LEVEL: s.opts.logLevel, ...env }, ready, prof),
    cwd: root,
    readyTimeoutMs: 180_000,
    keepLines: 200,
    onLine: (line, stream) => {
      if (stream === 'stderr' || /"level":(40|50|60)/.test(line)) log(`${name}: ${line.slice(0, 300)}`);
    },
  };
}

async function variantTarget(s: Shared, variant: VariantSpec, root: string): Promise<Target> {
  const taskQueue = `cpu-${variant.name}-${s.runId}`;
  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const js = (part: 'api' | 'worker') => (variant.compiled ? compiledEntry(PART_ENTRY[part]) : PART_ENTRY[part]);
  const stack: StackDescription = {
    ...s.described,
    taskQueue,
    worker: { metricsAddress: `127.0.0.1:${metricsPort}` },
    api: { host: '127.0.0.1', port: apiPort, limitsDb: join(s.dataDir, `${variant.name}-limits.db`) },
  };
  const apiUrl = loopbackUrl(apiPort);
  const worker = s.supervisor.add(
    spec(s, `${variant.name}.worker`, root, js('worker'), partEnv(stack, 'worker'), pollerProbe(s.client, taskQueue)),
  );
  // The sandboxes' URLs are ignored by the API; a variant that runs its worker inside the API process reads them there.
  const api = s.supervisor.add(
    spec(s, `${variant.name}.api`, root, js('api'), partEnv(stack, 'api', downstreamEnv(stack)), httpProbe(`${apiUrl}/healthz`)),
  );
  await Promise.all([worker.start(), api.start()]);
  log(`variant ${variant.name}: worker and API up (${variant.compiled ? 'compiled' : 'tsx'})`);
  return {
    name: variant.name,
    pids: { api: api.pid!, worker: worker.pid! },
    run: async (type, key) => {
      const { operation } = await submit(s.http, apiUrl, type, key, requestFor(type));
      if (operation.status !== 'succeeded')
        throw new Error(`${key} ${String(operation.status)}: ${JSON.stringify(operation.error)}`);
    },
  };
}

/** The main bench's same-work baseline: its baseline worker running bareHttp, started and awaited from this process. */
async function bareTarget(s: Shared): Promise<Target> {
  const taskQueue = `cpu-bare-${s.runId}`;
  const bundle = join(s.dataDir, 'baseline-bundle.js');
  writeFileSync(bundle, (await bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietLogger() })).code);
  const env = {
    ...temporalEnv(s.described),
    ...downstreamEnv(s.described),
    ...{ BENCH_WORKER_KIND: 'baseline', BENCH_TASK_QUEUE: taskQueue, BENCH_WORKFLOW_BUNDLE: bundle },
    BENCH_WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  };
  const worker = s.supervisor.add(
    spec(s, 'bare.worker', ROOT, 'tools/bench/processes/worker.ts', env, pollerProbe(s.client, taskQueue)),
  );
  await worker.start();
  log('bare worker up');
  return {
    name: BARE,
    pids: { worker: worker.pid! },
    run: async (type, key) => {
      const ref = operationRef(TENANT, key);
      const input: BareHttpInput = {
        type,
        tenant: ref.tenant,
        key: ref.key,
        request: requestFor(type),
        settings: { holdTtlSeconds: DEFAULT_HOLD_TTL_SECONDS },
      };
      await s.client.workflow.execute('bareHttp', { taskQueue, workflowId: ref.workflowId, args: [input] });
    },
  };
}

/** Every process's CPU so far, this one's (the driver) included. */
function processCpu(pids: Record<string, number>): Record<string, number> {
  const own = process.cpuUsage();
  const out: Record<string, number> = { driver: (own.user + own.system) / 1000 };
  for (const [name, pid] of Object.entries(pids)) {
    const ms = cpuMs(pid);
    if (ms !== undefined) out[name] = ms;
  }
  return out;
}

/** The rounds: each concurrency and type, every target (their order reversed every round), one batch at a time. */
async function measure(s: Shared, targets: Target[], shared: Record<string, number>): Promise<BatchRecord[]> {
  const { opts } = s;
  const records: BatchRecord[] = [];
  for (let round = 0; round < opts.rounds; round++)
    for (const c of opts.concurrencies)
      for (const type of opts.types)
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const pids = { ...shared, ...target.pids };
          // The previous batch's tail (visibility, timers) settles first; the work a batch leaves behind is its own.
          await sleep(300);
          const before = processCpu(pids);
          const prefix = `cpu-${s.runId}-${target.name}-${type}-c${c}-r${round}`;
          const result = await closedLoop(opts.ops, c, (i) => target.run(type, `${prefix}-${i}`));
          await sleep(300);
          const after = processCpu(pids);
          const cpu = Object.fromEntries(Object.keys(after).map((name) => [name, after[name]! - (before[name] ?? after[name]!)]));
          records.push({ target: target.name, type, concurrency: c, round, ops: result.ok, errors: result.errors, cpuMs: cpu });
          const perOp = ROLES.map((r) => `${r} ${((cpu[r] ?? 0) / Math.max(1, result.ok)).toFixed(1)}`);
          log(
            `round ${round + 1} ${type} c=${c} ${target.name}: ${result.ok} ok, ${result.errors.length} errors, ${perOp.join(' ')}`,
          );
        }
  return records;
}

export async function runOnStack(opts: Options): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  const dataDir = join(ROOT, '.data', `cpu-${runId}`);
  mkdirSync(dataDir, { recursive: true });
  const roots = opts.variants.map(materialise);
  const supervisor = new Supervisor();
  const http = httpClient(64);
  let connection: Connection | undefined;
  let sandboxes: Awaited<ReturnType<typeof startSandboxes>> | undefined;
  try {
    const temporal = await startDevServer({
      bin: ensureTemporalCli(),
      dbFile: join(dataDir, 'temporal.db'),
      port: await freePort(),
      headless: true,
      logLevel: 'warn',
      retentionMs: 86_400_000,
      supervisor,
    });
    sandboxes = await startSandboxes({ dataDir, logLevel: opts.logLevel, plainBody: '{}' });
    await seedSandboxes(http, sandboxes.urls);
    connection = await Connection.connect({ address: temporal.address });
    const described = {
      temporal: { address: temporal.address, namespace: 'default' },
      bank: { url: sandboxes.urls.bank },
      reservations: { url: sandboxes.urls.reservations },
    };
    const s: Shared = {
      opts,
      runId,
      dataDir,
      supervisor,
      client: new Client({ connection, namespace: 'default' }),
      http,
      described,
    };
    const targets = await Promise.all(opts.variants.map((variant, i) => variantTarget(s, variant, roots[i]!)));
    if (opts.bare) targets.push(await bareTarget(s));
    for (const target of targets)
      for (const type of opts.types) {
        const warm = await closedLoop(opts.warmup, 2, (i) => target.run(type, `cpu-${runId}-warm-${target.name}-${type}-${i}`));
        if (warm.errors.length > 0) throw new Error(`warm-up of ${target.name} ${type}: ${warm.errors[0]}`);
      }
    log(
      `warmed up; ${opts.rounds} rounds × ${opts.concurrencies.length} concurrencies × ${opts.types.length} types × ${targets.length} targets × ${opts.ops} operations`,
    );
    const window = { fromUs: Number(process.hrtime.bigint() / 1000n), toUs: 0 };
    const records = await measure(s, targets, {
      temporal: temporal.part.pid!,
      bank: sandboxes.pids.bank!,
      reservations: sandboxes.pids.reservations!,
    });
    window.toUs = Number(process.hrtime.bigint() / 1000n);
    const names = targets.map((t) => t.name);
    console.log(
      `## CPU per operation: ${names.join(' vs ')}\n\n\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\``,
    );
    console.log(
      `\nVariants: ${opts.variants.map((v, i) => `${v.name} = ${v.source}${v.compiled ? ' (compiled)' : ''} (${roots[i]})`).join('; ')}. ` +
        `LOG_LEVEL ${opts.logLevel}. "all": every process that does the operation's work (for bare, its Temporal client too; ` +
        `an API's driver is only the load generator). Columns in the order measured in even rounds, reversed in odd ones.\n`,
    );
    console.log(report(records, names, opts));
    if (opts.json) writeFileSync(opts.json, JSON.stringify({ options: opts, roots, records }, null, 2));
    // Stopped, so that every profile is written.
    await supervisor.stopAll();
    for (const p of summarizeProfiles(join(dataDir, 'profiles'), window)) {
      console.log(`\n### profile of ${p.process}, ${p.file} (${p.sampledMs.toFixed(0)} ms sampled in the batches)\n`);
      console.log(
        table(
          ['area', 'self ms', 'share'],
          p.byArea.map((a) => [a.area, a.selfMs.toFixed(0), `${(a.share * 100).toFixed(1)} %`]),
        ),
      );
      console.log(
        `\n${table(
          ['function', 'where', 'self ms', 'share'],
          p.top.map((t) => [t.fn, t.where, t.selfMs.toFixed(0), `${(t.share * 100).toFixed(1)} %`]),
        )}`,
      );
    }
  } finally {
    http.close();
    await connection?.close().catch(() => undefined);
    await supervisor.stopAll();
    await sandboxes?.stop();
    if (opts.cpuProf.length === 0) rmSync(dataDir, { recursive: true, force: true });
    else log(`profiles kept in ${join(dataDir, 'profiles')}`);
  }
}

/** --replay: CPU per replayed execution of one stored history, per variant's own bundle, in this process, the variants interleaved. */
export async function replayMain(opts: Options, historyFile: string): Promise<void> {
  Runtime.install({
    logger: quietLogger('error'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  const history = JSON.parse(readFileSync(historyFile, 'utf8')) as unknown;
  const bundles: Array<{ name: string; code: string }> = [];
  for (const variant of opts.variants) {
    const root = materialise(variant);
    // That checkout's own bundle options, so the bundle is made as its worker makes it.
    const entry = join(root, variant.compiled ? 'dist/worker/bundle.js' : 'worker/bundle.ts');
    const { WORKFLOW_BUNDLE_OPTIONS } = (await import(entry)) as { WORKFLOW_BUNDLE_OPTIONS: BundleOptions };
    bundles.push({
      name: variant.name,
      code: (await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quietLogger('error') })).code,
    });
    log(`variant ${variant.name}: bundled`);
  }
  const perExecution = new Map<string, number[]>(bundles.map((b) => [b.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const bundle of round % 2 === 0 ? bundles : [...bundles].reverse()) {
      const executions = Array.from({ length: opts.executions }, (_, i) => ({ workflowId: `replay-${round}-${i}`, history }));
      const before = process.cpuUsage();
      let failed = 0;
      for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, executions))
        if (result.error) failed++;
      if (failed > 0)
        throw new Error(
          `${bundle.name}: ${failed} of ${opts.executions} replays failed (a bundle that cannot replay this history)`,
        );
      const used = process.cpuUsage(before);
      perExecution.get(bundle.name)!.push((used.user + used.system) / 1000 / opts.executions);
      log(`round ${round + 1} ${bundle.name}: ${perExecution.get(bundle.name)!.at(-1)!.toFixed(2)} ms per execution`);
    }
  }
  console.log(
    `## CPU per replayed execution of ${historyFile}\n\n\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\`\n`,
  );
  console.log(replayReport(perExecution, opts.rounds, opts.executions));
}
