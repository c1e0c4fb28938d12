// How a scenario is measured: closed-loop batches, each with what it cost every process,
// merged per scenario into one result with its latency summary and throughput.
import { setTimeout as sleep } from 'node:timers/promises';
import { addUsage, type Usage } from '../accounting.js';
import { closedLoop, type BatchResult } from '../load.js';
import { summarize, type LatencySummary } from '../stats.js';
import type { BenchContext } from './context.js';
import type { Tally } from './workload.js';

/**
 * What a scenario measured. Per operation type (tools/bench/scenarios/kinds.ts): the type itself
 * (`payment`), `bare<N>`, `bare<N>-tracked`, `<type>-direct` and `bare-http-<type>`; and
 * `replay`, `replay-uncached`, `plain`; with --peers the peers' checkout (`restate`, `dbos`)
 * and the replays of finished checkouts (`replay-checkout`, `replay-restate`, `replay-dbos`).
 */
export type Kind = string;

export interface ScenarioResult {
  kind: Kind;
  concurrency: number;
  ops: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  opsPerSec: number;
  latencyMs: LatencySummary;
  /** Every latency sample in ms, rounded to 0.01 ms (for the chart and re-analysis). */
  samplesMs: number[];
  usage: Usage;
  /** POSTs answered 202 (the wait ended first), then polled to the end. */
  answered202: number;
  /** POSTs answered 503 engine_unavailable, retried with the same key after Retry-After. */
  retried503: number;
  /** Mean latency from throughput (Little's law: concurrency × wall ÷ n), immune to a coarse clock. */
  littleMeanMs: number;
  /** Steady-state rate of the closed loop: concurrency ÷ mean latency (Little's law). */
  steadyOpsPerSec: number;
  /** Batches the time bound ended before their count. */
  batchesCappedByTime: number;
  /** Samples ≤ 0 ms: the clock did not advance across a round trip (a VM clock under load). */
  nonPositiveSamples: number;
}

export interface Batch {
  kind: Kind;
  concurrency: number;
  result: BatchResult;
  usage: Usage;
  tally: Tally;
}

/** One closed-loop batch of `total` operations at `concurrency`, metered. */
export async function measured(
  ctx: BenchContext,
  kind: Kind,
  concurrency: number,
  total: number,
  op: (i: number, tally: Tally) => Promise<void>,
  maxMs = ctx.mode.batchMaxMs,
): Promise<Batch> {
  const tally: Tally = { answered202: 0, retried503: 0 };
  // Let the previous batch's tail (visibility, timers) settle before the meter starts.
  await sleep(300);
  const stop = await ctx.accounting.start();
  const result = await closedLoop(total, concurrency, (i) => op(i, tally), maxMs);
  const usage = await stop();
  return { kind, concurrency, result, usage, tally };
}

/** The batches of one scenario (its rounds) as one result. */
export function merge(batches: Batch[]): ScenarioResult {
  const first = batches[0]!;
  const latencies = batches.flatMap((b) => b.result.latenciesMs);
  const errors = batches.flatMap((b) => b.result.errors);
  const wallMs = batches.reduce((a, b) => a + b.result.wallMs, 0);
  let usage: Usage | undefined;
  for (const b of batches) usage = addUsage(usage, b.usage);
  return {
    kind: first.kind,
    concurrency: first.concurrency,
    ops: latencies.length,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 5),
    wallMs,
    opsPerSec: (latencies.length / wallMs) * 1000,
    latencyMs: summarize(latencies),
    samplesMs: latencies.map((l) => Math.round(l * 100) / 100),
    usage: usage!,
    littleMeanMs: latencies.length ? (first.concurrency * wallMs) / latencies.length : Number.NaN,
    steadyOpsPerSec: latencies.length ? (first.concurrency * 1000) / summarize(latencies).mean : Number.NaN,
    answered202: batches.reduce((a, b) => a + b.tally.answered202, 0),
    retried503: batches.reduce((a, b) => a + b.tally.retried503, 0),
    batchesCappedByTime: batches.filter((b) => b.result.cappedByTime).length,
    nonPositiveSamples: latencies.filter((l) => l <= 0).length,
  };
}
