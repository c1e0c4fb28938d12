// What every phase of a run is given: the options and the mode's counts, the run's sandboxes,
// bundles and engine, the HTTP client and the meter, the peers to race (if any), and where
// it records what it finished, what it skipped and the results it measured.
import type { HttpClient } from '../load.js';
import type { Accounting } from '../meter.js';
import type { BenchOptions, Mode } from '../options.js';
import type { PeerName } from '../peers/index.js';
import type { BenchResults } from '../results.js';
import type { Bundles, RowEngines, Sandboxes, Stack } from '../stack.js';

/** How retrysafe's steps reach their activities, and so which bare baseline R1 divides by. */
export type ActivityKind = 'regular' | 'local';

export interface PeerTarget {
  peer: PeerName;
  /** Where a checkout is POSTed: retrysafe's body and Idempotency-Key header. */
  checkoutUrl: string;
}

export interface BenchContext extends RowEngines {
  opts: BenchOptions;
  mode: Mode;
  runId: string;
  http: HttpClient;
  sandboxes: Sandboxes;
  bundles: Bundles;
  /** The run's engine; none in a run of the overload section alone, and none once it stopped. */
  stack?: Stack;
  accounting: Accounting;
  activityKind: ActivityKind;
  peers: PeerTarget[];
  /** Batches and trials left out because the time budget ran out. */
  skipped: string[];
  /** Keys (operations through the API, the peers') and workflow IDs (the rest) of finished operations, by scenario kind. */
  finished: Map<string, string[]>;
  /** chargeId of each finished operation that has one, by `<kind>:<key>`, so a replay can be checked against it. */
  charges: Map<string, string>;
  /** performance.now() at the start of the current phase, for the mode's time budget. */
  phaseStartedAt: number;
  results: BenchResults;
}

/** The run's engine, for a phase that needs it. */
export function engine(ctx: BenchContext): Stack {
  if (!ctx.stack) throw new Error('this phase needs the run’s engine');
  return ctx.stack;
}

/** Records a finished operation of `kind`. */
export function finish(ctx: Pick<BenchContext, 'finished'>, kind: string, id: string): void {
  if (!ctx.finished.has(kind)) ctx.finished.set(kind, []);
  ctx.finished.get(kind)!.push(id);
}

export const finishedOf = (ctx: Pick<BenchContext, 'finished'>, kind: string): string[] => ctx.finished.get(kind) ?? [];

/** Whether the current phase is past `ms` of its budget: a busy machine gets a shorter report, not a longer run. */
export const overBudget = (ctx: BenchContext, ms: number) => performance.now() - ctx.phaseStartedAt > ms;

/** The no-op baseline's workflow type in the activity kind retrysafe's steps use, with or without the bookkeeping. */
export function bareWorkflowType(activity: ActivityKind, tracked: boolean): string {
  return `bare${activity === 'local' ? 'Local' : ''}${tracked ? 'Tracked' : ''}`;
}
