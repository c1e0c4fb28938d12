// `npx tsx tools/bench/cpu-per-op.ts`: the CPU time each process spends per new operation, so that
// a change meant to make retrysafe cheaper is judged by what it saves, on a shared machine
// where latency is noise. It starts one tuned Temporal dev server on a SQLite file
// (tools/dev-server.ts) and the sandboxes (tools/bench/stack.ts), then for each variant (a
// checkout of the repository: a folder, or a git revision it unpacks) that variant's own
// worker and API as production runs them (worker/main.ts, client/api/server.ts, or their
// compiled twins under dist/), each on its own task queue. With --bare, plain Temporal
// making the same keyed HTTP calls (tools/bench/cpu-bare-workflow.ts) runs beside them: the fair
// baseline. Batches of N operations run at each concurrency, the variants interleaved and
// their order reversed every round (A B, then B A), one batch at a time; each batch reads
// every process's CPU time (/proc/<pid>/stat: user + system, all threads) before and after.
// Figures are ms of CPU per operation per process, summed over the rounds.
//
// With --replay <history.json>, no stack: each variant's workflow bundle replays the stored
// history N times per round in this process, variants interleaved the same way, and the
// figure is this process's CPU per execution. That is the workflow code's own cost (and the
// SDK's around it), free of the network and of Temporal: the finer instrument for a change
// to workflows/ that keeps its commands (a history recorded before it still replays).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  makeTelemetryFilterString,
  type BundleOptions,
} from '@temporalio/worker';
import { DEFAULT_HOLD_TTL_SECONDS } from '../../client/api/config.js';
import { startDevServer } from '../../tools/dev-server.js';
import type { PartSpec } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import { httpProbe, type Probe } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli } from '../../tools/temporal-cli.js';
import type { OperationDefinition } from '../../workflows/definition.js';
import { downstreamKey, operationRef } from '../../workflows/identity.js';
import { builtInRegistry } from '../../workflows/registry.js';
import type { BareCall } from './cpu-bare-workflow.js';
import { httpClient, type HttpClient } from './http.js';
import { closedLoop } from './load.js';
import { cpuMs } from './proc.js';
import { ROOT, startSandboxes } from './stack.js';

const USAGE = `npx tsx tools/bench/cpu-per-op.ts [options]

  --variant name=<folder|git revision>[:dist]   a checkout to measure (repeatable; default: this one as "this").
                       A revision is unpacked under .data/cpu-variants/; ":dist" runs its compiled build.
  --bare               also run plain Temporal making the same keyed calls (the fair baseline)
  --types a,b          operation types (default: every built-in type)
  --concurrency 1,8    concurrencies (default 1,8)
  --ops N              operations per batch (default 40)
  --rounds N           rounds; the order of the variants is reversed every round (default 4)
  --warmup N           unmeasured operations per variant and type first (default 10)
  --log-level L        LOG_LEVEL of the workers and APIs (default warn)
  --cpu-prof name.part write V8 CPU profiles of a variant's worker or api (repeatable) and summarise them
  --json FILE          also write every batch as JSON
  --replay FILE        instead of the stack: replay this stored history with each variant's bundle
  --executions N       with --replay: executions per variant and round (default 100)`;

/** A request of each built-in type, as a client sends it, against the accounts and SKU seeded below. */
const ACCOUNT = 'acc_cpu';
const ACCOUNT_TO = 'acc_cpu_to';
const SKU = 'sku_cpu';
const SAMPLE_REQUESTS: Record<string, Record<string, unknown>> = {
  payment: { account: ACCOUNT, amount: 100, currency: 'EUR' },
  checkout: { account: ACCOUNT, amount: 100, currency: 'EUR', items: [{ sku: SKU, quantity: 1 }] },
  transfer: { from: ACCOUNT, to: ACCOUNT_TO, amount: 100, currency: 'EUR' },
};

/**
 * What each hand-written step activity sends (activities/bank.ts, activities/reservations.ts),
 * for the bare baseline; declared calls are read off their definition.
 */
const HAND_WRITTEN_CALLS: Record<string, (input: unknown) => Pick<BareCall, 'method' | 'path' | 'body'>> = {
  reserveItems: (input) => ({ method: 'POST', path: '/reservations', body: input as Record<string, unknown> }),
  chargePayment: (input) => ({ method: 'POST', path: '/charges', body: input as Record<string, unknown> }),
  confirmReservation: () => ({ method: 'POST', path: '/reservations/{key}/confirm', body: {} }),
};

const BARE = 'bare';
const TENANT = 'default';

interface VariantSpec {
  name: string;
  source: string;
  compiled: boolean;
}

interface Options {
  replay: string | undefined;
  executions: number;
  variants: VariantSpec[];
  bare: boolean;
  types: string[];
  concurrencies: number[];
  ops: number;
  rounds: number;
  warmup: number;
  logLevel: string;
  cpuProf: string[];
  json: string | undefined;
}

function log(line: string): void {
  console.error(`[cpu ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

function positiveInts(raw: string, what: string): number[] {
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${what}: positive integers`);
  return values;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      variant: { type: 'string', multiple: true },
      bare: { type: 'boolean', default: false },
      types: { type: 'string' },
      concurrency: { type: 'string', default: '1,8' },
      ops: { type: 'string', default: '40' },
      rounds: { type: 'string', default: '4' },
      warmup: { type: 'string', default: '10' },
      'log-level': { type: 'string', default: 'warn' },
      'cpu-prof': { type: 'string', multiple: true },
      json: { type: 'string' },
      replay: { type: 'string' },
      executions: { type: 'string', default: '100' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const variants = (values.variant ?? ['this=.']).map((raw): VariantSpec => {
    const match = /^([a-z][a-z0-9_-]{0,19})=(.+?)(:dist)?$/.exec(raw);
    if (!match) throw new Error(`--variant ${raw}: expected name=<folder|revision>[:dist]`);
    if (match[1] === BARE) throw new Error(`--variant: "${BARE}" names the baseline`);
    return { name: match[1]!, source: match[2]!, compiled: match[3] !== undefined };
  });
  if (new Set(variants.map((v) => v.name)).size !== variants.length) throw new Error('--variant: names must differ');
  const types = values.types ? values.types.split(',').map((t) => t.trim()) : [...builtInRegistry.types];
  for (const type of types) {
    if (!builtInRegistry.get(type)) throw new Error(`--types: ${type} is not a built-in operation type`);
    if (!SAMPLE_REQUESTS[type]) throw new Error(`--types: no sample request for ${type} in tools/bench/cpu-per-op.ts`);
  }
  const [ops] = positiveInts(values.ops, '--ops');
  const [rounds] = positiveInts(values.rounds, '--rounds');
  const warmup = Number(values.warmup);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error('--warmup: a whole number');
  const parts = new Set([...variants.map((v) => `${v.name}.worker`), ...variants.map((v) => `${v.name}.api`)]);
  for (const p of values['cpu-prof'] ?? []) if (!parts.has(p)) throw new Error(`--cpu-prof ${p}: expected <variant>.worker|api`);
  const [executions] = positiveInts(values.executions, '--executions');
  if (values.replay !== undefined && !existsSync(values.replay)) throw new Error(`--replay ${values.replay}: no such file`);
  return {
    replay: values.replay,
    executions: executions!,
    variants,
    bare: values.bare,
    types,
    concurrencies: positiveInts(values.concurrency, '--concurrency'),
    ops: ops!,
    rounds: rounds!,
    warmup,
    logLevel: values['log-level'],
    cpuProf: values['cpu-prof'] ?? [],
    json: values.json,
  };
}

/** The folder a variant runs from: the folder named, or the revision unpacked beside the repository's own dependencies. */
function materialise(spec: VariantSpec): string {
  const asFolder = resolve(ROOT, spec.source);
  let root = asFolder;
  if (!existsSync(join(asFolder, 'package.json'))) {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const sha = git('rev-parse', '--verify', `${spec.source}^{commit}`);
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

/** The keyed calls an operation's steps make, for the bare workflow to make them the same way. */
function bareCallsOf(definition: OperationDefinition, request: Record<string, unknown>, workflowId: string): BareCall[] {
  return definition.steps.map((step) => {
    const key = downstreamKey(workflowId, step.keySuffix);
    if (step.call.kind === 'http') {
      return {
        service: step.service,
        key,
        method: step.call.method,
        path: step.call.path,
        body: step.call.body?.(request) ?? {},
      };
    }
    const made = HAND_WRITTEN_CALLS[step.call.activity];
    if (!made) throw new Error(`no bare call for activity ${step.call.activity}`);
    return { service: step.service, key, ...made(step.call.input?.(request, { holdTtlSeconds: DEFAULT_HOLD_TTL_SECONDS })) };
  });
}

/** The bare worker, run as a child of this script (CPU_BENCH_ROLE=bare-worker): the runtime set up as worker/main.ts does. */
async function runBareWorker(): Promise<void> {
  const env = (name: string) => process.env[name] ?? (() => { throw new Error(`${name} is not set`); })(); // prettier-ignore
  const urls: Record<string, string> = { bank: env('BANK_URL'), reservations: env('RESERVATIONS_URL') };
  const noop = () => undefined;
  Runtime.install({
    logger: { log: noop, trace: noop, debug: noop, info: noop, warn: (m) => console.warn(m), error: (m) => console.error(m) },
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      metrics: { prometheus: { bindAddress: env('WORKER_METRICS_ADDRESS') } },
    },
  });
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: env('RETRYSAFE_TASK_QUEUE'),
    workflowsPath: new URL('./cpu-bare-workflow.ts', import.meta.url).pathname,
    activities: {
      // The same HTTP client as the product's activities (fetch), the same headers and the same rule for a 2xx.
      async keyedCall(call: BareCall): Promise<Record<string, unknown>> {
        const keyed = call.path.includes('{key}');
        const res = await fetch(`${urls[call.service]}${call.path.replace('{key}', encodeURIComponent(call.key))}`, {
          method: call.method,
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            ...(keyed ? {} : { 'idempotency-key': call.key }),
          },
          body: JSON.stringify(call.body),
          signal: AbortSignal.timeout(5_000),
        });
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status < 200 || res.status >= 300) throw new Error(`${call.service} answered ${res.status}`);
        return body;
      },
    },
  });
  process.once('SIGTERM', () => worker.shutdown());
  process.once('SIGINT', () => worker.shutdown());
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}

/** Ready once a worker polls `taskQueue`. */
function pollerProbe(client: Client, taskQueue: string): Probe {
  const WORKFLOW = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
  return (ctx) =>
    ctx.poll(
      `a poller on ${taskQueue}`,
      async () => {
        const res = await client.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          taskQueueType: WORKFLOW,
        });
        return (res.pollers?.length ?? 0) > 0;
      },
      250,
    );
}

/** One thing measured: a variant (its API and worker) or the bare baseline (this process as its client, and its worker). */
interface Target {
  name: string;
  /** Process ids by role: api, worker. */
  pids: Record<string, number>;
  run(type: string, key: string): Promise<void>;
}

interface BatchRecord {
  target: string;
  type: string;
  concurrency: number;
  round: number;
  ops: number;
  errors: string[];
  /** CPU ms per process over the batch. */
  cpuMs: Record<string, number>;
}

/** POST the operation (with a wait); on 202 GET it until it ends. It must succeed. */
async function throughApi(http: HttpClient, apiUrl: string, definition: OperationDefinition, key: string): Promise<void> {
  const res = await http.send('POST', `${apiUrl}/v1/${definition.plural}`, {
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(SAMPLE_REQUESTS[definition.type]),
  });
  if (res.status !== 200 && res.status !== 202)
    throw new Error(`POST ${definition.plural} → ${res.status} ${res.text.slice(0, 200)}`);
  let operation = JSON.parse(res.text) as { status: string; error?: unknown };
  const deadline = Date.now() + 60_000;
  while (operation.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
    await new Promise((r) => setTimeout(r, 50));
    const poll = await http.send('GET', `${apiUrl}/v1/operations/${encodeURIComponent(key)}`);
    operation = JSON.parse(poll.text) as typeof operation;
  }
  if (operation.status !== 'succeeded') throw new Error(`${key} ${operation.status}: ${JSON.stringify(operation.error)}`);
}

function processCpu(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const ms = cpuMs(pid);
    if (ms !== undefined) out[name] = ms;
  }
  const own = process.cpuUsage();
  out.driver = (own.user + own.system) / 1000;
  return out;
}

const ROLES = ['api', 'worker', 'temporal', 'bank', 'reservations', 'driver'] as const;

/** Mean ms per operation by role, over a target's batches of one type and concurrency. */
function perOp(batches: BatchRecord[]): {
  roles: Record<string, number>;
  total: number;
  rounds: number[];
  roleRounds: Record<string, number[]>;
} {
  const ops = batches.reduce((n, b) => n + b.ops, 0);
  const roles: Record<string, number> = {};
  const roleRounds: Record<string, number[]> = {};
  for (const role of ROLES) {
    roles[role] = batches.reduce((n, b) => n + (b.cpuMs[role] ?? 0), 0) / ops;
    roleRounds[role] = batches.map((b) => (b.cpuMs[role] ?? 0) / b.ops);
  }
  const isBare = batches[0]?.target === BARE;
  // What does the operation's work: the driver is the client of a bare workflow, but only the load generator of an API.
  const work = (cpu: Record<string, number>) =>
    ROLES.filter((r) => r !== 'driver' || isBare).reduce((n, r) => n + (cpu[r] ?? 0), 0);
  return {
    roles,
    total: batches.reduce((n, b) => n + work(b.cpuMs), 0) / ops,
    rounds: batches.map((b) => work(b.cpuMs) / b.ops),
    roleRounds,
  };
}

/**
 * The mean of the per-round differences between two targets and twice its standard error:
 * each round measures both back to back, so a difference within a round is free of the
 * machine's slower drift (other work on a shared machine comes and goes by the minute).
 */
function pairedDifference(a: number[], b: number[]): { mean: number; twoSe: number } {
  const d = b.map((x, i) => x - a[i]!).filter((x) => Number.isFinite(x));
  const mean = d.reduce((n, x) => n + x, 0) / d.length;
  const variance = d.length > 1 ? d.reduce((n, x) => n + (x - mean) ** 2, 0) / (d.length - 1) : NaN;
  return { mean, twoSe: 2 * Math.sqrt(variance / d.length) };
}

function report(records: BatchRecord[], targets: string[], opts: Options): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
  const lines: string[] = [];
  for (const type of opts.types) {
    for (const c of opts.concurrencies) {
      const cell = records.filter((r) => r.type === type && r.concurrency === c);
      const errors = cell.flatMap((r) => r.errors);
      // A round in which any batch failed is left out for every target: its CPU bought fewer
      // operations (or timeouts), and the rounds stay paired.
      const failedRounds = new Set(cell.filter((r) => r.errors.length > 0).map((r) => r.round));
      const clean = cell.filter((r) => !failedRounds.has(r.round));
      const stats = targets.map((t) => perOp(clean.filter((r) => r.target === t)));
      const ops = clean.filter((r) => r.target === targets[0]).reduce((n, b) => n + b.ops, 0);
      lines.push(`### ${type}, c=${c} (ms of CPU per operation; ${ops} operations per column)`, '');
      const base = stats[0]!;
      const others = targets.slice(1).filter((t) => t !== BARE);
      lines.push(`| process | ${targets.join(' | ')} |${others.map((t) => ` ${t} − ${targets[0]} |`).join('')}`);
      lines.push(`|---|${targets.map(() => '---|').join('')}${others.map(() => '---|').join('')}`);
      for (const role of ROLES) {
        const label = role === 'driver' ? 'driver (client of bare)' : role;
        const deltas = others.map((t) => stats[targets.indexOf(t)]!.roles[role]! - base.roles[role]!);
        lines.push(
          `| ${label} | ${stats.map((s) => f(s.roles[role]!)).join(' | ')} |${deltas.map((d) => ` ${d >= 0 ? '+' : ''}${f(d)} |`).join('')}`,
        );
      }
      const totals = others.map((t) => stats[targets.indexOf(t)]!.total - base.total);
      lines.push(
        `| **all** | ${stats.map((s) => `**${f(s.total)}**`).join(' | ')} |${totals.map((d) => ` ${d >= 0 ? '+' : ''}${f(d)} (${f((100 * d) / base.total)} %) |`).join('')}`,
      );
      lines.push(
        `| all, per round (min–max) | ${stats.map((s) => `${f(Math.min(...s.rounds))}–${f(Math.max(...s.rounds))}`).join(' | ')} |${others.map(() => ' |').join('')}`,
      );
      const paired = (rounds: (stat: (typeof stats)[number]) => number[]) =>
        others.map((t) => {
          const { mean, twoSe } = pairedDifference(rounds(base), rounds(stats[targets.indexOf(t)]!));
          return ` ${mean >= 0 ? '+' : ''}${f(mean)} ± ${f(twoSe)} |`;
        });
      if (others.length > 0 && base.rounds.length > 1) {
        for (const role of ['api', 'worker', 'temporal'] as const) {
          lines.push(
            `| ${role}, paired by round (mean ± 2 SE) | ${targets.map(() => '').join(' | ')} |${paired((s) => s.roleRounds[role]!).join('')}`,
          );
        }
        lines.push(
          `| all, paired by round (mean ± 2 SE) | ${targets.map(() => '').join(' | ')} |${paired((s) => s.rounds).join('')}`,
        );
      }
      const bare = targets.indexOf(BARE);
      if (bare >= 0) {
        lines.push(
          `| all ÷ bare | ${stats.map((s) => (s.total / stats[bare]!.total).toFixed(2)).join(' | ')} |${others.map(() => ' |').join('')}`,
        );
      }
      if (errors.length > 0) {
        lines.push(
          '',
          `errors (${errors.length}; ${failedRounds.size} round(s) left out): ${[...new Set(errors)].slice(0, 3).join('; ')}`,
        );
      }
      lines.push('');
    }
  }
  return lines.join('\n');
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/**
 * Where a profiled process spent the measured batches: self time by package (or folder of
 * this repository) and by function, counting only the samples taken between `fromUs` and
 * `toUs` (V8 stamps samples with the monotonic clock process.hrtime reads), so start-up,
 * bundling and warm-up are left out.
 */
function profileSummary(file: string, fromUs: number, toUs: number, top = 30): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at >= fromUs && at <= toUs)
      self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    total += ms;
    const area =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
      (url.startsWith('node:') ? 'node core' : url ? url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '') : '(native / V8)');
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules\/)?/, '')}:${lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + ms);
  }
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => `- ${k}: ${ms.toFixed(0)} ms (${((100 * ms) / total).toFixed(1)} %)`);
  return [`${total.toFixed(0)} ms sampled in the batches`, '', ...rows(areas), '', ...rows(fns)].join('\n');
}

async function main(opts: Options): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  const dataDir = join(ROOT, '.data', `cpu-${runId}`);
  const profileDir = join(dataDir, 'profiles');
  mkdirSync(dataDir, { recursive: true });
  const roots = opts.variants.map(materialise);
  const supervisor = new Supervisor();
  const http = httpClient(64);
  let connection: Connection | undefined;
  let sandboxes: Awaited<ReturnType<typeof startSandboxes>> | undefined;
  try {
    const port = await freePort();
    const temporal = await startDevServer({
      bin: ensureTemporalCli(),
      dbFile: join(dataDir, 'temporal.db'),
      port,
      headless: true,
      logLevel: 'warn',
      retentionMs: 24 * 3600_000,
      supervisor,
    });
    log(`Temporal on ${temporal.address}`);
    sandboxes = await startSandboxes({ dataDir, logLevel: opts.logLevel, plainBody: '{}' });
    const { bank, reservations } = sandboxes.urls;
    for (const id of [ACCOUNT, ACCOUNT_TO]) {
      const a = await http.json('POST', `${bank}/accounts`, { id, currency: 'EUR', balance: 1_000_000_000_000 });
      if (a.status !== 201) throw new Error(`POST /accounts → ${a.status}`);
    }
    const stock = await http.json('PUT', `${reservations}/inventory/${SKU}`, { available: 1_000_000_000 });
    if (stock.status >= 300) throw new Error(`PUT /inventory → ${stock.status}`);
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: 'default' });

    const shared = { temporal: temporal.part.pid!, bank: sandboxes.pids.bank!, reservations: sandboxes.pids.reservations! };
    const base = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', LOG_LEVEL: opts.logLevel, LOG_PRETTY: '0' };
    const spec = (name: string, root: string, entry: string, env: Record<string, string>, ready: Probe): PartSpec => ({
      name,
      command: {
        entry: join(root, entry),
        execArgv: opts.cpuProf.includes(name) ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)] : [],
      },
      cwd: root,
      env: { ...base, ...env },
      unsetEnv: [/^TEMPORAL_/, /^RETRYSAFE_/],
      ready,
      readyTimeoutMs: 180_000,
      keepLines: 200,
      onLine: (line, stream) => {
        if (stream === 'stderr' || /"level":(40|50|60)/.test(line)) log(`${name}: ${line.slice(0, 300)}`);
      },
    });

    const targets: Target[] = [];
    await Promise.all(
      opts.variants.map(async (variant, i) => {
        const root = roots[i]!;
        const taskQueue = `cpu-${variant.name}-${runId}`;
        const [apiPort, metricsPort] = [await freePort(), await freePort()];
        const js = (path: string) => (variant.compiled ? `dist/${path}.js` : `${path}.ts`);
        const worker = supervisor.add(
          spec(
            `${variant.name}.worker`,
            root,
            js('worker/main'),
            {
              RETRYSAFE_TASK_QUEUE: taskQueue,
              BANK_URL: bank,
              RESERVATIONS_URL: reservations,
              WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
            },
            pollerProbe(client, taskQueue),
          ),
        );
        const apiUrl = `http://127.0.0.1:${apiPort}`;
        const api = supervisor.add(
          spec(
            `${variant.name}.api`,
            root,
            js('client/api/server'),
            {
              API_HOST: '127.0.0.1',
              API_PORT: String(apiPort),
              RETRYSAFE_TASK_QUEUE: taskQueue,
              RETRYSAFE_LIMITS_DB: join(dataDir, `${variant.name}-limits.db`),
              // Ignored by the API; a variant that runs its worker inside the API process (to
              // start workflows eagerly) reads them there.
              BANK_URL: bank,
              RESERVATIONS_URL: reservations,
            },
            httpProbe(`${apiUrl}/healthz`),
          ),
        );
        await Promise.all([worker.start(), api.start()]);
        log(`variant ${variant.name}: worker and API up (${variant.compiled ? 'compiled' : 'tsx'})`);
        targets[i] = {
          name: variant.name,
          pids: { api: api.pid!, worker: worker.pid! },
          run: (type, key) => throughApi(http, apiUrl, builtInRegistry.get(type)!, key),
        };
      }),
    );
    if (opts.bare) {
      const taskQueue = `cpu-bare-${runId}`;
      const worker = supervisor.add({
        ...spec(
          'bare.worker',
          ROOT,
          'tools/bench/cpu-per-op.ts',
          {
            CPU_BENCH_ROLE: 'bare-worker',
            RETRYSAFE_TASK_QUEUE: taskQueue,
            BANK_URL: bank,
            RESERVATIONS_URL: reservations,
            WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
          },
          pollerProbe(client, taskQueue),
        ),
      });
      await worker.start();
      log('bare worker up');
      targets.push({
        name: BARE,
        pids: { worker: worker.pid! },
        run: async (type, key) => {
          const workflowId = operationRef(TENANT, key).workflowId;
          const calls = bareCallsOf(builtInRegistry.get(type)!, SAMPLE_REQUESTS[type]!, workflowId);
          await client.workflow.execute('bareCalls', { taskQueue, workflowId, args: [calls] });
        },
      });
    }

    for (const target of targets) {
      for (const type of opts.types) {
        const warm = await closedLoop(opts.warmup, 2, (i) => target.run(type, `cpu-${runId}-warm-${target.name}-${type}-${i}`));
        if (warm.errors.length > 0) throw new Error(`warm-up of ${target.name} ${type}: ${warm.errors[0]}`);
      }
    }
    log(
      `warmed up; ${opts.rounds} rounds × ${opts.concurrencies.length} concurrencies × ${opts.types.length} types × ${targets.length} targets × ${opts.ops} operations`,
    );

    const records: BatchRecord[] = [];
    const measuredFromUs = Number(process.hrtime.bigint() / 1000n);
    for (let round = 0; round < opts.rounds; round++) {
      for (const c of opts.concurrencies) {
        for (const type of opts.types) {
          for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
            const pids = { ...shared, ...target.pids };
            // The previous batch's tail (visibility, timers) settles before the meter starts.
            await new Promise((r) => setTimeout(r, 300));
            const before = processCpu(pids);
            const prefix = `cpu-${runId}-${target.name}-${type}-c${c}-r${round}`;
            const result = await closedLoop(opts.ops, c, (i) => target.run(type, `${prefix}-${i}`));
            // The work a batch leaves behind (its history's visibility updates) is its own.
            await new Promise((r) => setTimeout(r, 300));
            const after = processCpu(pids);
            const cpu: Record<string, number> = {};
            for (const name of Object.keys(after)) cpu[name] = after[name]! - (before[name] ?? after[name]!);
            records.push({ target: target.name, type, concurrency: c, round, ops: result.ok, errors: result.errors, cpuMs: cpu });
            log(
              `round ${round + 1} ${type} c=${c} ${target.name}: ${result.ok} ok, ${result.errors.length} errors, ` +
                ROLES.map((r) => `${r} ${((cpu[r] ?? 0) / Math.max(1, result.ok)).toFixed(1)}`).join(' '),
            );
          }
        }
      }
    }

    const measuredToUs = Number(process.hrtime.bigint() / 1000n);
    const names = targets.map((t) => t.name);
    console.log(`## CPU per operation: ${names.join(' vs ')}\n`);
    console.log(`\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\``);
    console.log(
      `\nVariants: ${opts.variants.map((v, i) => `${v.name} = ${v.source}${v.compiled ? ' (compiled)' : ''} (${roots[i]})`).join('; ')}. ` +
        `LOG_LEVEL ${opts.logLevel}. "all": every process that does the operation's work (for bare, its Temporal client too; ` +
        `an API's driver is only the load generator). Columns in the order measured in even rounds, reversed in odd ones.\n`,
    );
    console.log(report(records, names, opts));
    if (opts.json) writeFileSync(opts.json, JSON.stringify({ options: opts, roots, records }, null, 2));
    // Stopped, so that every profile is written.
    await supervisor.stopAll();
    for (const part of opts.cpuProf) {
      // One file per thread: the main thread, the workflow thread, the module loader's.
      for (const file of readdirSync(join(profileDir, part)).filter((f) => f.endsWith('.cpuprofile'))) {
        console.log(`\n### profile of ${part}, ${file}\n`);
        console.log(profileSummary(join(profileDir, part, file), measuredFromUs, measuredToUs));
      }
    }
  } finally {
    http.close();
    await connection?.close().catch(() => undefined);
    await supervisor.stopAll();
    await sandboxes?.stop();
    if (opts.cpuProf.length === 0) rmSync(dataDir, { recursive: true, force: true });
    else log(`profiles kept in ${profileDir}`);
  }
}

/** --replay: CPU per replayed execution of one stored history, per variant bundle, in this process. */
async function replayMain(opts: Options, historyFile: string): Promise<void> {
  const noop = () => undefined;
  Runtime.install({
    logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) },
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  const history = JSON.parse(readFileSync(historyFile, 'utf8')) as unknown;
  const bundles: Array<{ name: string; code: string }> = [];
  for (const variant of opts.variants) {
    const root = materialise(variant);
    // That checkout's own bundle options, so the bundle is made as its worker makes it.
    const entry = join(root, variant.compiled ? 'dist/worker/bundle.js' : 'worker/bundle.ts');
    const { WORKFLOW_BUNDLE_OPTIONS } = (await import(entry)) as { WORKFLOW_BUNDLE_OPTIONS: BundleOptions };
    const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
    const { code } = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quiet });
    bundles.push({ name: variant.name, code });
    log(`variant ${variant.name}: bundled`);
  }
  const perExecution = new Map<string, number[]>(bundles.map((b) => [b.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const bundle of round % 2 === 0 ? bundles : [...bundles].reverse()) {
      async function* executions() {
        for (let i = 0; i < opts.executions; i++) yield { workflowId: `replay-${round}-${i}`, history };
      }
      const before = process.cpuUsage();
      let failed = 0;
      for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, executions())) {
        if (result.error) failed++;
      }
      if (failed > 0)
        throw new Error(
          `${bundle.name}: ${failed} of ${opts.executions} replays failed (a bundle that cannot replay this history)`,
        );
      const used = process.cpuUsage(before);
      const ms = (used.user + used.system) / 1000 / opts.executions;
      perExecution.get(bundle.name)!.push(ms);
      log(`round ${round + 1} ${bundle.name}: ${ms.toFixed(2)} ms per execution`);
    }
  }
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—');
  const first = perExecution.get(bundles[0]!.name)!;
  console.log(`## CPU per replayed execution of ${historyFile}\n`);
  console.log(`\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\`\n`);
  console.log(
    `| variant | ms per execution (mean of ${opts.rounds} rounds × ${opts.executions}) | − ${bundles[0]!.name}, paired by round (mean ± 2 SE) |`,
  );
  console.log('|---|---|---|');
  for (const { name } of bundles) {
    const values = perExecution.get(name)!;
    const { mean, twoSe } = pairedDifference(first, values);
    const cell = name === bundles[0]!.name ? '' : `${mean >= 0 ? '+' : ''}${f(mean)} ± ${f(twoSe)}`;
    console.log(`| ${name} | ${f(values.reduce((n, x) => n + x, 0) / values.length)} | ${cell} |`);
  }
}

if (process.env.CPU_BENCH_ROLE === 'bare-worker') {
  runBareWorker().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  const opts = parseOptions(process.argv.slice(2));
  (opts.replay ? replayMain(opts, opts.replay) : main(opts)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
