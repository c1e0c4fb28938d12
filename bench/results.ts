// The results of one run and the ratios computed from them. Every ratio divides two
// numbers measured in the same run, interleaved, on the same machine.
import type { MachineInfo } from './machine.js';
import type { ProfileSummary } from './profile.js';
import type { ContentionTrial } from './scenarios/contention.js';
import type { Kind, ScenarioResult } from './scenarios/measure.js';
import { ratio } from './stats.js';
import type { StartupResult } from './startup.js';
import type { HistoryCost } from './transitions.js';

export const TARGETS = { r1: 0.9, r2p99: 1.25, r4: 2, executions: 1, effects: 1 } as const;

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
  schema: 1;
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
