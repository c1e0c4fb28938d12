// The compensation stack shared by every saga. A compensation is registered *before* its
// step runs, because a step that timed out may still have taken effect; on failure the
// stack runs in reverse, in a non-cancellable scope, each entry retried until it succeeds.
// One still failing after `attentionAfterMs` raises the attention flag and keeps going:
// a compensation is never dropped.
import { CancellationScope, condition, sleep } from '@temporalio/workflow';
import type { CompensationName } from './contracts.js';
import { sagaMetrics } from './metrics.js';

interface Compensation {
  name: CompensationName;
  run: () => Promise<unknown>;
}

export interface SagaOptions {
  attentionAfterMs: number;
  /** Called once when a compensation has been failing for longer than attentionAfterMs. */
  onAttention: () => void;
}

/** Back-off between workflow-level re-runs of a compensation whose activity gave up. */
const RERUN_BACKOFF_MS = [1_000, 5_000, 30_000, 60_000];

export class Saga {
  private readonly stack: Compensation[] = [];
  private attentionRaised = false;

  constructor(private readonly opts: SagaOptions) {}

  /** Registers the compensation of the step about to run. */
  register(name: CompensationName, run: () => Promise<unknown>): void {
    this.stack.push({ name, run });
  }

  /** A step failed with a business error: it took no effect, so its compensation is dropped. */
  discard(name: CompensationName): void {
    const at = this.stack.map((c) => c.name).lastIndexOf(name);
    if (at >= 0) this.stack.splice(at, 1);
  }

  /** Runs every registered compensation in reverse order; returns their names in that order. */
  async compensate(): Promise<CompensationName[]> {
    return CancellationScope.nonCancellable(async () => {
      const ran: CompensationName[] = [];
      while (this.stack.length > 0) {
        const compensation = this.stack.pop()!;
        await this.runUntilDone(compensation);
        sagaMetrics.compensated(compensation.name);
        ran.push(compensation.name);
      }
      return ran;
    });
  }

  private async runUntilDone(compensation: Compensation): Promise<void> {
    let done = false;
    const attempt = async (): Promise<void> => {
      for (let rerun = 0; ; rerun++) {
        try {
          await compensation.run();
          return;
        } catch {
          // The activity's own retry policy has no attempt limit, so this only happens if
          // the activity failed non-retryably; run it again rather than drop it.
          await sleep(RERUN_BACKOFF_MS[Math.min(rerun, RERUN_BACKOFF_MS.length - 1)]!);
        }
      }
    };
    const running = attempt().finally(() => {
      done = true;
    });
    const finishedInTime = await condition(() => done, this.opts.attentionAfterMs);
    if (!finishedInTime && !this.attentionRaised) {
      this.attentionRaised = true;
      this.opts.onAttention();
    }
    await running;
  }
}
