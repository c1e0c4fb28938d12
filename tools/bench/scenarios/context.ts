// What every scenario of a run is given: the stack, the mode's counts and time budget, the
// HTTP client and the accounting, the peers to race (if any), and where it records what it
// finished or skipped.
import type { Accounting } from '../accounting.js';
import type { HttpClient } from '../http.js';
import type { Mode } from '../modes.js';
import type { PeerName } from '../peers/index.js';
import type { Stack } from '../stack.js';

/** How retrysafe's steps reach their activities, and so which bare baseline R1 divides by. */
export type ActivityKind = 'regular' | 'local';

export interface PeerTarget {
  peer: PeerName;
  /** Where a checkout is POSTed: retrysafe's body and Idempotency-Key header. */
  checkoutUrl: string;
}

export interface BenchContext {
  stack: Stack;
  mode: Mode;
  runId: string;
  http: HttpClient;
  accounting: Accounting;
  log: (line: string) => void;
  /** performance.now() at the start of the current phase, for the mode's time budget. */
  phaseStartedAt: number;
  activityKind: ActivityKind;
  peers: PeerTarget[];
  /** Batches and trials left out because the time budget ran out. */
  skipped: string[];
  /** Keys (retrysafe's operations through the API, the peers') and workflow IDs (the rest) of finished operations, by scenario kind. */
  finished: Map<string, string[]>;
  /** chargeId of each finished operation that has one, by `<kind>:<key>`, so a replay can be checked against it. */
  charges: Map<string, string>;
}

export function emptyFinished(): Map<string, string[]> {
  return new Map();
}

/** Records a finished operation of `kind`. */
export function finish(ctx: Pick<BenchContext, 'finished'>, kind: string, id: string): void {
  const list = ctx.finished.get(kind);
  if (list) list.push(id);
  else ctx.finished.set(kind, [id]);
}

/** The finished operations of `kind` (none yet: empty). */
export function finishedOf(ctx: Pick<BenchContext, 'finished'>, kind: string): string[] {
  return ctx.finished.get(kind) ?? [];
}

/** Starts a phase of the run: its budget counts from here. */
export function startPhase(ctx: BenchContext): void {
  ctx.phaseStartedAt = performance.now();
}

/** Whether the current phase is past `ms` of its budget: a busy machine gets a shorter report, not a longer run. */
export function overBudget(ctx: BenchContext, ms: number): boolean {
  return performance.now() - ctx.phaseStartedAt > ms;
}

/** The no-op baseline's workflow type in the activity kind retrysafe's steps use, with or without the bookkeeping. */
export function bareWorkflowType(activity: ActivityKind, tracked: boolean): string {
  return `bare${activity === 'local' ? 'Local' : ''}${tracked ? 'Tracked' : ''}`;
}
