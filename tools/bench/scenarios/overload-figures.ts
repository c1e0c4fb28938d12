// What the overload section records (tools/bench/scenarios/overload.ts runs it): its
// configurations, the tenants, and per configuration the steady tenant's latency alone and
// under each flood, the flooding tenant's goodput, and the audit. Plain data, so the report
// and the verdicts read it without loading the runner.
import type { OverloadCounts } from '../modes.js';
import type { LatencySummary } from '../stats.js';

/** The dev server setting that turns Temporal's task queue fairness on. */
export const FAIRNESS_SETTING = 'task-queue-fairness';
export const AS_SHIPPED = 'as shipped: fairness on, default admission';
export const FAIRNESS_OFF = 'fairness off, default admission';
export const TENANT_RATE = 'fairness on, a rate for tenant A';
export const TENANTS = { flood: 'tenant-a', steady: 'tenant-b' } as const;
/** The concurrency of the throughput A's goodput is compared with. */
export const REFERENCE_CONCURRENCY = 32;

/** What one tenant's answers were, by status (`503 engine_busy`: status and code), over a phase. */
export type Answers = Record<string, number>;

export interface TenantFigures {
  /** Operations that reached a terminal outcome, and of them the ones that succeeded. */
  ended: number;
  succeeded: number;
  /** Operations the client gave up on (an error that was not a refusal, or a deadline). */
  errors: number;
  errorSamples: string[];
  answers: Answers;
  /** Latency from the first POST to the terminal outcome, refusals waited out included. */
  latencyMs: LatencySummary;
  samplesMs: number[];
  wallMs: number;
}

export interface FloodResult {
  /** Tenant A's concurrency. */
  concurrency: number;
  a: TenantFigures;
  b: TenantFigures;
  /** A's successes per second over the flood. */
  aGoodput: number;
}

export interface OverloadAudit {
  /** Operations a 200 or 202 accepted, and of them the ones terminal when read back after the run. */
  accepted: number;
  terminal: number;
  succeeded: number;
  /** Each tenant's account: what its successes should have taken, and what the bank moved. */
  accounts: Array<{ tenant: string; account: string; expected: number; moved: number }>;
  /** 5xx answers other than 503, and 429/503 answers without Retry-After. */
  badAnswers: number;
  badSamples: string[];
  /** Every check held: nothing lost, nothing doubled, only honest refusals. */
  ok: boolean;
  problems: string[];
}

export interface OverloadRow {
  name: string;
  fairness: boolean;
  /** RETRYSAFE_TENANT_LIMITS of the row's API; null: none (the default). */
  tenantLimits: string | null;
  /** Tenant B alone, one at a time. */
  idle: TenantFigures;
  /** Tenant B at REFERENCE_CONCURRENCY: its steady rate (concurrency ÷ mean latency), ops/s. */
  reference: { concurrency: number; opsPerSec: number; figures: TenantFigures };
  floods: FloodResult[];
  audit: OverloadAudit;
  argv: string[];
}

export interface OverloadResult {
  /** The operation type both tenants start. */
  type: string;
  tenants: typeof TENANTS;
  counts: OverloadCounts;
  rows: OverloadRow[];
  /** Configurations the time budget left out. */
  skipped: string[];
}

/** The configurations, in the order they run: the tenant rate is set from the first one's throughput. */
export function overloadPlan(): Array<{ name: string; without: string[]; rated: boolean }> {
  return [
    { name: AS_SHIPPED, without: [], rated: false },
    { name: FAIRNESS_OFF, without: [FAIRNESS_SETTING], rated: false },
    { name: TENANT_RATE, without: [], rated: true },
  ];
}

/** Tenant A's rate in the rated configuration: half the engine's throughput, at least 1/s. */
export function tenantRate(referenceOpsPerSec: number | undefined): number {
  return Number.isFinite(referenceOpsPerSec) ? Math.max(1, Math.floor(referenceOpsPerSec! / 2)) : 10;
}
