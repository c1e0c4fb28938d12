// What every scenario of a run is given: the stack, the mode's counts and time budget, the
// HTTP client and the accounting, and where it records what it finished or skipped.
import type { Accounting } from '../accounting.js';
import type { HttpClient } from '../http.js';
import type { Mode } from '../modes.js';
import type { Stack } from '../stack.js';

export interface BenchContext {
  stack: Stack;
  mode: Mode;
  runId: string;
  http: HttpClient;
  accounting: Accounting;
  log: (line: string) => void;
  /** performance.now() at the start of the run, for the mode's time budget. */
  startedAt: number;
  /** Batches and trials left out because the time budget ran out. */
  skipped: string[];
  /** Keys (retrysafe) and workflow IDs (bare) of finished operations, by kind. */
  finished: Record<'payment' | 'checkout' | 'bare1' | 'bare3' | 'bare1-tracked' | 'bare3-tracked', string[]>;
}

/** Whether the run is past `by` ms of its budget: a busy machine gets a shorter report, not a longer run. */
export function overBudget(ctx: BenchContext, by: number): boolean {
  return performance.now() - ctx.startedAt > by;
}
