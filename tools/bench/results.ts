// The results of one run and the ratios computed from them. Every ratio divides two
// numbers measured in the same run, interleaved, on the same machine. What the run is
// judged by (its goals and verdicts) is ./verdicts.ts.
import type { MachineInfo } from './machine.js';
import type { PeerName } from './peers/index.js';
import type { ProfileSummary } from './profile.js';
import type { AblationResult } from './scenarios/ablation.js';
import type { ContentionTrial } from './scenarios/contention.js';
import type { ActivityKind } from './scenarios/context.js';
import type { OperationKinds } from './scenarios/kinds.js';
import type { Kind, ScenarioResult } from './scenarios/measure.js';
import type { OverloadResult } from './scenarios/overload-figures.js';
import { ratio } from './stats.js';
import type { StartupResult } from './startup.js';
import type { Timeline } from './timeline.js';
import type { HistoryCost } from './transitions.js';
import type { Verdict } from './verdicts.js';

export interface PeerInfo {
  peer: PeerName;
  /** The durability settings in force, as the peer stack reports and checks them. */
  durability: string[];
  versions: Record<string, string>;
  processes: string[];
}

/** One operation type's ratios at one concurrency. */
export interface OperationRatios {
  /** R1: operations/s ÷ bare workflows/s with as many no-op activities (the engine's floor). */
  r1: number;
  /** The same from completed ÷ wall time of the batches (biased by ramp-up and drain at high c). */
  r1Wall: number;
  /** R2: latency of retrysafe ÷ the bare workflow's, p50 and p99. */
  r2p50: number;
  r2p99: number;
  /** R1′: operations/s ÷ bare workflows/s making the same keyed HTTP calls (the same work); NaN when not measured. */
  r1Fair: number;
  r1FairWall: number;
  /** Latency ÷ the same-work bare workflow's, p50 and p99. */
  r2FairP50: number;
  r2FairP99: number;
}

export interface RatioRow {
  concurrency: number;
  /** Each operation type's ratios, by type (runs recorded before had the payment and checkout fields below). */
  operations?: Record<string, OperationRatios>;
  /** R1, 1 activity: payments/s ÷ bare-1 workflows/s (runs recorded before `operations`). */
  r1Payment?: number;
  /** R1, 3 activities: checkouts/s ÷ bare-3 workflows/s (runs recorded before `operations`). */
  r1Checkout?: number;
  r1PaymentWall?: number;
  r1CheckoutWall?: number;
  r2PaymentP50?: number;
  r2PaymentP99?: number;
  r2CheckoutP50?: number;
  r2CheckoutP99?: number;
  /** R4: replay p50 ÷ plain endpoint p50 (and the same at p99, for context). */
  r4: number;
  r4P99: number;
  /** R4 from the mean latencies by Little's law (robust when the clock is coarse). */
  r4Mean: number;
}

export interface BenchResults {
  /**
   * 2 added the peers, the verdicts, the activity kind, the tuning, the timeline and the
   * ablation; 3 the operation types measured (`operations`, every type of the registry, with
   * the same-work baseline), the ratios by type and the overload section.
   */
  schema: 1 | 2 | 3;
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
  /** The operation types measured and the scenario kinds of each (absent: a run of payment and checkout only). */
  operations?: OperationKinds[];
  /** Another tenant's flood (--overload, and the full run), or null. */
  overload?: OverloadResult | null;
}

/** More than a fifth of the samples at ≤ 0 ms: the clock, not the code, set the percentiles. */
export function clockTrouble(s: ScenarioResult | undefined): boolean {
  return s !== undefined && s.ops > 0 && s.nonPositiveSamples / s.ops > 0.2;
}

export function find(scenarios: ScenarioResult[], kind: Kind, c: number): ScenarioResult | undefined {
  return scenarios.find((s) => s.kind === kind && s.concurrency === c);
}

export function computeRatios(scenarios: ScenarioResult[], concurrencies: number[], operations: OperationKinds[]): RatioRow[] {
  return concurrencies.map((c) => {
    const [r, pl] = (['replay', 'plain'] as Kind[]).map((kind) => find(scenarios, kind, c));
    return {
      concurrency: c,
      operations: Object.fromEntries(
        operations.map((op) => {
          const [own, bare, fair] = [op.own, op.bare, op.fair].map((k) => (k ? find(scenarios, k, c) : undefined));
          const ratios: OperationRatios = {
            r1: ratio(own?.steadyOpsPerSec, bare?.steadyOpsPerSec),
            r1Wall: ratio(own?.opsPerSec, bare?.opsPerSec),
            r2p50: ratio(own?.latencyMs.p50, bare?.latencyMs.p50),
            r2p99: ratio(own?.latencyMs.p99, bare?.latencyMs.p99),
            r1Fair: ratio(own?.steadyOpsPerSec, fair?.steadyOpsPerSec),
            r1FairWall: ratio(own?.opsPerSec, fair?.opsPerSec),
            r2FairP50: ratio(own?.latencyMs.p50, fair?.latencyMs.p50),
            r2FairP99: ratio(own?.latencyMs.p99, fair?.latencyMs.p99),
          };
          return [op.own, ratios];
        }),
      ),
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
