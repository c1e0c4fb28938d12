// The results of one run and the ratios computed from them. Every ratio divides two
// numbers measured in the same run, interleaved, on the same machine.
import type { MachineInfo } from './machine.js';
import type { PeerName } from './peers/index.js';
import type { ProfileSummary } from './profile.js';
import type { AblationResult } from './scenarios/ablation.js';
import type { ContentionTrial } from './scenarios/contention.js';
import type { ActivityKind } from './scenarios/context.js';
import type { Kind, ScenarioResult } from './scenarios/measure.js';
import { ratio } from './stats.js';
import type { StartupResult } from './startup.js';
import type { Timeline } from './timeline.js';
import type { HistoryCost } from './transitions.js';

export const TARGETS = { r1: 0.9, r2p99: 1.25, r4: 2, executions: 1, effects: 1 } as const;

/**
 * The figures retrysafe is held to, each with its target and a moonshot; every verdict is
 * computed from the run's own numbers. `better` says which way is good.
 */
export const GOALS = {
  vsRestateP50: { target: 2, moonshot: 1.5, better: 'lower' },
  vsDbosThroughput: { target: 0.5, moonshot: 1, better: 'higher' },
  r1: { target: TARGETS.r1, moonshot: 0.95, better: 'higher' },
  r2p99: { target: TARGETS.r2p99, moonshot: 1.1, better: 'lower' },
  replayVsRestate: { target: 1, moonshot: 0.5, better: 'lower' },
} as const;

export type Met = 'moonshot' | 'target' | 'missed' | 'not measured';

export interface Verdict {
  figure: string;
  /** The run's figure as shown; `value` is the number it was judged on (null: not measured). */
  now: string;
  value: number | null;
  target: string;
  moonshot: string;
  met: Met;
  note?: string;
}

export interface PeerInfo {
  peer: PeerName;
  /** The durability settings in force, as the peer stack reports and checks them. */
  durability: string[];
  versions: Record<string, string>;
  processes: string[];
}

export interface RatioRow {
  concurrency: number;
  /** R1, 1 activity: payments/s ÷ bare-1 workflows/s. */
  r1Payment: number;
  /** R1, 3 activities: checkouts/s ÷ bare-3 workflows/s. */
  r1Checkout: number;
  /** The same from completed ÷ wall time of the batches (biased by ramp-up and drain at high c). */
  r1PaymentWall: number;
  r1CheckoutWall: number;
  /** R2: latency of retrysafe ÷ the bare workflow's, p50 and p99. */
  r2PaymentP50: number;
  r2PaymentP99: number;
  r2CheckoutP50: number;
  r2CheckoutP99: number;
  /** R4: replay p50 ÷ plain endpoint p50 (and the same at p99, for context). */
  r4: number;
  r4P99: number;
  /** R4 from the mean latencies by Little's law (robust when the clock is coarse). */
  r4Mean: number;
}

export interface BenchResults {
  /** 2 added the peers, the verdicts, the activity kind, the tuning, the timeline and the ablation. */
  schema: 1 | 2;
  name: string;
  mode: string;
  command: string;
  startedAt: string;
  durationMs: number;
  machine: MachineInfo;
  temporal: {
    cli: string;
    argv: string[];
    /** --sqlite-pragma values passed to the dev server (none: SQLite's defaults). */
    pragmasPassed: string[];
    /** journal_mode read back from the file after the server stopped. */
    journalMode: string | undefined;
    dataFs: string;
  };
  settings: {
    logLevel: string;
    workerOptions: string;
    apiCache: string;
    bundleMs: number;
    batchMaxMs: number;
    profiled: boolean;
    counts: Record<string, unknown>;
  };
  ratios: RatioRow[];
  /** Batches and trials the time budget left out (a busy machine). */
  skipped: string[];
  scenarios: ScenarioResult[];
  contention: ContentionTrial[];
  history: HistoryCost[];
  startup: StartupResult | null;
  profiles: ProfileSummary[];
  chart: { svg: string; png: string | null; pngNote: string };
  /** The activity kind of retrysafe's steps, and so of the bare baseline R1 divides by. */
  activityKind?: { used: ActivityKind; detected: string; how: string };
  /** The embedded server's tuning the run used. */
  tuning?: {
    source: string;
    settings: Array<{ name: string; args: readonly string[]; why: string }>;
  };
  /** The peers raced in this run (--peers), or null. */
  peers?: PeerInfo[] | null;
  verdicts?: Verdict[];
  timeline?: Timeline[];
  ablation?: AblationResult | null;
}

/** More than a fifth of the samples at ≤ 0 ms: the clock, not the code, set the percentiles. */
export function clockTrouble(s: ScenarioResult | undefined): boolean {
  return s !== undefined && s.ops > 0 && s.nonPositiveSamples / s.ops > 0.2;
}

export function find(scenarios: ScenarioResult[], kind: Kind, c: number): ScenarioResult | undefined {
  return scenarios.find((s) => s.kind === kind && s.concurrency === c);
}

export function computeRatios(scenarios: ScenarioResult[], concurrencies: number[]): RatioRow[] {
  return concurrencies.map((c) => {
    const [p, b1, k, b3, r, pl] = (['payment', 'bare1', 'checkout', 'bare3', 'replay', 'plain'] as Kind[]).map((kind) =>
      find(scenarios, kind, c),
    );
    return {
      concurrency: c,
      r1Payment: ratio(p?.steadyOpsPerSec, b1?.steadyOpsPerSec),
      r1Checkout: ratio(k?.steadyOpsPerSec, b3?.steadyOpsPerSec),
      r1PaymentWall: ratio(p?.opsPerSec, b1?.opsPerSec),
      r1CheckoutWall: ratio(k?.opsPerSec, b3?.opsPerSec),
      r2PaymentP50: ratio(p?.latencyMs.p50, b1?.latencyMs.p50),
      r2PaymentP99: ratio(p?.latencyMs.p99, b1?.latencyMs.p99),
      r2CheckoutP50: ratio(k?.latencyMs.p50, b3?.latencyMs.p50),
      r2CheckoutP99: ratio(k?.latencyMs.p99, b3?.latencyMs.p99),
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

function judge(value: number, goal: { target: number; moonshot: number; better: 'lower' | 'higher' }): Met {
  if (!Number.isFinite(value)) return 'not measured';
  const ok = (bound: number) => (goal.better === 'lower' ? value <= bound : value >= bound);
  return ok(goal.moonshot) ? 'moonshot' : ok(goal.target) ? 'target' : 'missed';
}

const bound = (goal: { target: number; moonshot: number; better: 'lower' | 'higher' }, v: number, unit = '') =>
  `${goal.better === 'lower' ? '≤' : '≥'} ${v}${unit}`;

const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

/** The verdicts of a run against GOALS, from its own scenarios and contention trials. */
export function computeVerdicts(r: Pick<BenchResults, 'scenarios' | 'ratios' | 'contention' | 'peers'>): Verdict[] {
  const cs = r.ratios.map((x) => x.concurrency);
  const low = Math.min(...cs);
  const high = Math.max(...cs);
  const peers = new Set((r.peers ?? []).map((p) => p.peer));
  const noPeer = (peer: string) =>
    peers.has(peer as PeerName) ? undefined : `${peer} not in this run: npm run bench -- --peers`;
  const verdicts: Verdict[] = [];
  const push = (
    figure: string,
    value: number,
    goal: { target: number; moonshot: number; better: 'lower' | 'higher' },
    unit: string,
    note?: string,
  ) =>
    verdicts.push({
      figure,
      now: Number.isFinite(value) ? `${fmt(value)}${unit}` : 'n/a',
      value: Number.isFinite(value) ? value : null,
      target: bound(goal, goal.target, unit),
      moonshot: bound(goal, goal.moonshot, unit),
      met: judge(value, goal),
      ...(note ? { note } : {}),
    });

  // A peer's figures count only when the run raced that peer.
  const peerScenario = (kind: Kind, c: number) =>
    peers.has(kind.replace(/^replay-/, '') as PeerName) ? find(r.scenarios, kind, c) : undefined;
  const checkout1 = find(r.scenarios, 'checkout', low);
  const restate1 = peerScenario('restate', low);
  // The engine's own floor beside each peer figure: bare Temporal, three no-op steps of the
  // same kind on the same server, divided by the same peer number.
  const bareLow = find(r.scenarios, 'bare3', low);
  const floor = (value: number, unit: string) =>
    Number.isFinite(value) ? `; bare Temporal, 3 no-op steps: ${fmt(value)}${unit}` : '';
  push(
    `checkout c=${low} p50 ÷ Restate's (same run)`,
    ratio(checkout1?.latencyMs.p50, restate1?.latencyMs.p50),
    GOALS.vsRestateP50,
    '×',
    noPeer('restate') ??
      `${fmt(checkout1?.latencyMs.p50 ?? Number.NaN, 1)} ms ÷ ${fmt(restate1?.latencyMs.p50 ?? Number.NaN, 1)} ms` +
        floor(ratio(bareLow?.latencyMs.p50, restate1?.latencyMs.p50), '×'),
  );
  const checkoutHigh = find(r.scenarios, 'checkout', high);
  const dbosHigh = peerScenario('dbos', high);
  const bareHigh = find(r.scenarios, 'bare3', high);
  push(
    `checkout c=${high} ops/s ÷ DBOS's (same run)`,
    ratio(checkoutHigh?.steadyOpsPerSec, dbosHigh?.steadyOpsPerSec),
    GOALS.vsDbosThroughput,
    '',
    noPeer('dbos') ??
      `${fmt(checkoutHigh?.steadyOpsPerSec ?? Number.NaN, 1)}/s ÷ ${fmt(dbosHigh?.steadyOpsPerSec ?? Number.NaN, 1)}/s` +
        floor(ratio(bareHigh?.steadyOpsPerSec, dbosHigh?.steadyOpsPerSec), ''),
  );
  const r1 = r.ratios.flatMap((x) => [
    { v: x.r1Payment, at: `payment c=${x.concurrency}` },
    { v: x.r1Checkout, at: `checkout c=${x.concurrency}` },
  ]);
  const r1Worst = r1.filter((x) => Number.isFinite(x.v)).sort((a, b) => a.v - b.v)[0];
  push(
    `R1: ops/s ÷ bare Temporal, same server, same activity kind, c = ${cs.join(', ')} (worst)`,
    r1Worst?.v ?? Number.NaN,
    GOALS.r1,
    '',
    r1Worst ? `worst at ${r1Worst.at}` : undefined,
  );
  const r2 = r.ratios.flatMap((x) => [
    { v: x.r2PaymentP99, at: `payment c=${x.concurrency}` },
    { v: x.r2CheckoutP99, at: `checkout c=${x.concurrency}` },
  ]);
  const r2Worst = r2.filter((x) => Number.isFinite(x.v)).sort((a, b) => b.v - a.v)[0];
  push('R2 p99 (worst)', r2Worst?.v ?? Number.NaN, GOALS.r2p99, '', r2Worst ? `worst at ${r2Worst.at}` : undefined);
  const replay1 = find(r.scenarios, 'replay-checkout', low);
  const restateReplay1 = peerScenario('replay-restate', low);
  const replayClock = clockTrouble(replay1) || clockTrouble(restateReplay1);
  push(
    `replay p50 ÷ Restate's replay p50 (checkout, c=${low})`,
    replayClock ? Number.NaN : ratio(replay1?.latencyMs.p50, restateReplay1?.latencyMs.p50),
    GOALS.replayVsRestate,
    '×',
    noPeer('restate') ??
      (replayClock
        ? "the clock stood still in over a fifth of the samples: see the mean latencies (Little's law) in section 3"
        : `${fmt(replay1?.latencyMs.p50 ?? Number.NaN)} ms ÷ ${fmt(restateReplay1?.latencyMs.p50 ?? Number.NaN)} ms`),
  );
  const executions = r.contention.map((t) => t.executions);
  const effects = r.contention.flatMap((t) => [t.charges, ...(t.unitsTaken === null ? [] : [t.unitsTaken])]);
  const worstOf = (v: number[]) => (v.length ? v.reduce((a, b) => (Math.abs(b - 1) > Math.abs(a - 1) ? b : a)) : Number.NaN);
  const contentionOk =
    executions.length > 0 && executions.every((e) => e === TARGETS.executions) && effects.every((e) => e === TARGETS.effects);
  verdicts.push({
    figure: 'contention: executions, effects per key',
    now: executions.length ? `${worstOf(executions)}, ${worstOf(effects)}` : 'n/a',
    value: executions.length ? (contentionOk ? 1 : 0) : null,
    target: '1, 1',
    moonshot: '1, 1',
    met: executions.length === 0 ? 'not measured' : contentionOk ? 'moonshot' : 'missed',
    note: `${r.contention.length} trials of ${r.contention[0]?.requests ?? 0} identical requests`,
  });
  return verdicts;
}
