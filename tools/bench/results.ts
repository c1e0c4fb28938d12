// What a run records (the results JSON, schema 3) and the figures derived from it: every
// ratio divides two numbers measured in the same run, interleaved, on the same machine; what
// the report and the verdicts know about each kind of scenario (its label, the processes that
// do its work) is here too, so both read one definition. What a run is judged by is
// ./verdicts.ts; how it is written, ./report.ts.
import { ratio, type ScenarioResult } from './load.js';
import type { ClockHealth } from './meter.js';
import type { PeerName } from './peers/index.js';
import type { AblationResult } from './phases/ablation.js';
import type { ActivityKind } from './phases/context.js';
import type { ContentionTrial } from './phases/contention.js';
import type { HistoryCost, Timeline } from './phases/histories.js';
import type { OverloadResult } from './phases/overload.js';
import type { StartupResult } from './phases/startup.js';
import type { Verdict } from './verdicts.js';
import type { OperationKinds } from './workload.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  /** At the start and at the end of the run: the machine is shared, and its load moves every latency. */
  loadAverage: string;
  loadAverageEnd?: string;
  node: string;
  temporalCli: string;
  packages: Record<string, string>;
  /** Filesystem type under the run's data dir (tmpfs would make SQLite's fsync free). */
  dataFs: string;
  /** The latency clock, checked at the start and the end of the run. */
  clock: { start: ClockHealth; end?: ClockHealth };
}

/** One operation type's ratios at one concurrency (NaN, stored as null, where not measured). */
export interface OperationRatios {
  /** R1: ops/s ÷ bare workflows/s with as many no-op activities; from completed ÷ wall time too. */
  r1: number;
  r1Wall: number;
  /** R2: latency ÷ the bare workflow's, p50 and p99. */
  r2p50: number;
  r2p99: number;
  /** R1′ and R2′: the same against bare workflows making the same keyed HTTP calls. */
  r1Fair: number;
  r1FairWall: number;
  r2FairP50: number;
  r2FairP99: number;
}

export interface RatioRow {
  concurrency: number;
  operations: Record<string, OperationRatios>;
  /** R4: replay p50 ÷ plain endpoint p50; at p99; from the mean latencies by Little's law. */
  r4: number;
  r4P99: number;
  r4Mean: number;
}

export interface PeerInfo {
  peer: PeerName;
  /** The durability settings in force, as the peer stack reports and checks them. */
  durability: string[];
  versions: Record<string, string>;
  processes: string[];
}

export interface BenchResults {
  schema: 3;
  name: string;
  mode: string;
  command: string;
  startedAt: string;
  durationMs: number;
  machine: MachineInfo;
  temporal: { cli: string; argv: string[]; pragmasPassed: string[]; journalMode: string | undefined; dataFs: string };
  settings: {
    logLevel: string;
    workerOptions: string;
    apiCache: string;
    bundleMs: number;
    batchMaxMs: number;
    counts: Record<string, unknown>;
  };
  ratios: RatioRow[];
  /** Batches and trials the time budget left out (a busy machine). */
  skipped: string[];
  scenarios: ScenarioResult[];
  contention: ContentionTrial[];
  history: HistoryCost[];
  startup: StartupResult | null;
  /** The latency chart beside the report (none: a run without latency scenarios). */
  chart: { svg: string };
  activityKind?: { used: ActivityKind; detected: string; how: string };
  tuning: { source: string; settings: Array<{ name: string; args: readonly string[]; why: string }> };
  peers: PeerInfo[] | null;
  verdicts: Verdict[];
  timeline?: Timeline[];
  ablation: AblationResult | null;
  operations: OperationKinds[];
  overload: OverloadResult | null;
}

/** More than a fifth of the samples at ≤ 0 ms: the clock, not the code, set the percentiles. */
export function clockTrouble(s: ScenarioResult | undefined): boolean {
  return s !== undefined && s.ops > 0 && s.nonPositiveSamples / s.ops > 0.2;
}

export function find(scenarios: ScenarioResult[], kind: string | undefined, c: number): ScenarioResult | undefined {
  return scenarios.find((s) => s.kind === kind && s.concurrency === c);
}

export function computeRatios(scenarios: ScenarioResult[], concurrencies: number[], operations: OperationKinds[]): RatioRow[] {
  return concurrencies.map((c) => {
    const [r, pl] = [find(scenarios, 'replay', c), find(scenarios, 'plain', c)];
    const of = (op: OperationKinds): OperationRatios => {
      const [own, bare, fair] = [op.own, op.bare, op.fair].map((k) => find(scenarios, k, c));
      return {
        r1: ratio(own?.steadyOpsPerSec, bare?.steadyOpsPerSec),
        r1Wall: ratio(own?.opsPerSec, bare?.opsPerSec),
        r2p50: ratio(own?.latencyMs.p50, bare?.latencyMs.p50),
        r2p99: ratio(own?.latencyMs.p99, bare?.latencyMs.p99),
        r1Fair: ratio(own?.steadyOpsPerSec, fair?.steadyOpsPerSec),
        r1FairWall: ratio(own?.opsPerSec, fair?.opsPerSec),
        r2FairP50: ratio(own?.latencyMs.p50, fair?.latencyMs.p50),
        r2FairP99: ratio(own?.latencyMs.p99, fair?.latencyMs.p99),
      };
    };
    return {
      concurrency: c,
      operations: Object.fromEntries(operations.map((op) => [op.own, of(op)])),
      // A p50 read off a clock that stood still is 0 or a step: no ratio rather than a wrong one.
      r4: clockTrouble(r) || clockTrouble(pl) ? Number.NaN : ratio(r?.latencyMs.p50, pl?.latencyMs.p50),
      r4P99: ratio(r?.latencyMs.p99, pl?.latencyMs.p99),
      r4Mean: ratio(r?.littleMeanMs, pl?.littleMeanMs),
    };
  });
}

/** The results as JSON, indented, with arrays of numbers (latency samples) kept on one line. */
export function resultsJson(results: BenchResults): string {
  return (
    JSON.stringify(results, null, 2).replace(
      /\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g,
      (_, inner: string) => `[${inner.split(/,\s+/).join(',')}]`,
    ) + '\n'
  );
}

export const n1 = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(1) : 'n/a');
export const n2 = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : 'n/a');
/** CPU ms per operation of one process over a scenario (NaN: not metered, or no operations). */
export function cpuPerOp(s: ScenarioResult, proc: string): number {
  const cpu = s.usage.cpuMs[proc];
  return cpu === undefined || s.ops === 0 ? Number.NaN : cpu / s.ops;
}

const OURS = ['api', 'worker', 'temporal', 'bank', 'reservations'];
export const activities = (n: number, kind = '') => `${n} ${kind}activit${n === 1 ? 'y' : 'ies'}`;
/** Which processes do a kind's work (the bench process is the client of bare workflows only), and which answered its requests. */
export interface KindFacts {
  label: string;
  parts: readonly string[];
  worker?: 'worker' | 'baselineWorker';
  api?: 'api' | 'apiNoCache' | 'plain';
  apiRpcs?: boolean;
}

const FIXED: Record<string, KindFacts> = {
  replay: { label: 'replay (cached)', parts: [], worker: 'worker', api: 'api', apiRpcs: true },
  'replay-uncached': { label: 'replay (no cache)', parts: [], worker: 'worker', api: 'apiNoCache', apiRpcs: true },
  plain: { label: 'plain endpoint', parts: [], worker: 'worker', api: 'plain' },
  restate: { label: 'checkout on Restate', parts: ['restate-server', 'restate-service', 'bank', 'reservations'] },
  dbos: { label: 'checkout on DBOS', parts: ['postgres', 'dbos-service', 'bank', 'reservations'] },
  'replay-restate': { label: 'checkout replay on Restate', parts: [] },
  'replay-dbos': { label: 'checkout replay on DBOS', parts: [] },
};

/** What the report knows about a scenario kind (tools/bench/workload.ts names them); any other name is an operation type's own. */
export function kindFacts(kind: string): KindFacts {
  if (Object.hasOwn(FIXED, kind)) return FIXED[kind]!;
  const bare = { worker: 'baselineWorker', api: 'api' } as const;
  const patterns: Array<[RegExp, (m: string) => KindFacts]> = [
    [
      /^bare(\d+)$/,
      (m) => ({ label: `bare, ${activities(Number(m))}`, parts: ['baselineWorker', 'temporal', 'orchestrator'], ...bare }),
    ],
    [/^bare(\d+)-tracked$/, (m) => ({ label: `bare ${m} + bookkeeping`, parts: [], ...bare })],
    [
      /^bare-http-(.+)$/,
      (m) => ({
        label: `bare + ${m}'s HTTP calls`,
        parts: ['baselineWorker', 'temporal', 'bank', 'reservations', 'orchestrator'],
        ...bare,
      }),
    ],
    [/^(.+)-direct$/, (m) => ({ label: `${m}, no API`, parts: [], worker: 'worker', api: 'api' })],
    [/^replay-(.+)$/, (m) => ({ label: `${m} replay (cached)`, parts: [], worker: 'worker', api: 'api', apiRpcs: true })],
  ];
  for (const [re, facts] of patterns) {
    const m = re.exec(kind);
    if (m) return facts(m[1]!);
  }
  return { label: kind, parts: OURS, worker: 'worker', api: 'api', apiRpcs: true };
}

export const label = (k: string) => kindFacts(k).label;
/** CPU ms per operation of the processes that do a scenario's work, in all. */
export function systemCpu(s: ScenarioResult): number {
  return kindFacts(s.kind).parts.reduce((a, p) => a + (Number.isFinite(cpuPerOp(s, p)) ? cpuPerOp(s, p) : 0), 0);
}

/** One operation's ratios in a row of the run's ratios (JSON has no NaN: a ratio not computed was stored as null). */
export function ratiosOf(row: RatioRow | undefined, op: OperationKinds): OperationRatios {
  const own = (row?.operations[op.own] ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    ['r1', 'r1Wall', 'r2p50', 'r2p99', 'r1Fair', 'r1FairWall', 'r2FairP50', 'r2FairP99'].map((k) => [
      k,
      typeof own[k] === 'number' ? own[k] : Number.NaN,
    ]),
  ) as unknown as OperationRatios;
}

/** All processes' CPU per operation over a scenario ÷ the same-work baseline's: CPU ÷ same work. */
export function cpuVsSameWork(r: BenchResults, op: OperationKinds, c: number): number {
  const [own, fair] = [find(r.scenarios, op.own, c), find(r.scenarios, op.fair, c)];
  return own && fair ? ratio(systemCpu(own), systemCpu(fair)) : Number.NaN;
}
