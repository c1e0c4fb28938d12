// The one process supervisor of the repository: `npm start`, the benchmarks, the chaos run
// and the tests all run their parts through it. Parts are registered in dependency order
// (Temporal first, the API last), started when and as the caller decides, restarted as
// their policy says, and stopped in reverse order, so that nothing loses what it depends
// on while it shuts down (the API before the worker, Temporal last so SQLite closes
// cleanly).
import { Part, type PartEvent, type PartSpec, type RestartPolicy } from './part.js';
import type { ExitInfo } from './child.js';
import type { StartError } from './ready.js';

/**
 * The policy of `npm start`: restart after 1 s, doubling while a part keeps dying (at most
 * 30 s), and give up after three failed starts in a row.
 */
export const RESTART_WITH_BACKOFF: RestartPolicy = {
  maxFailedStarts: 3,
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  stableAfterMs: 60_000,
};

export class Supervisor {
  readonly parts: Part[] = [];
  /** Resolves with the first part that crashed and then could not be started again. */
  readonly gaveUp: Promise<{ part: Part; error: StartError }>;
  private giveUp!: (event: { part: Part; error: StartError }) => void;

  constructor(private readonly onEvent: (event: PartEvent) => void = () => undefined) {
    this.gaveUp = new Promise((resolve) => (this.giveUp = resolve));
  }

  /** Registers a part (not started yet); the stop order is the reverse of the add order. */
  add(spec: PartSpec): Part {
    const part = new Part(spec, (event) => {
      if (event.type === 'gave-up') this.giveUp(event);
      this.onEvent(event);
    });
    this.parts.push(part);
    return part;
  }

  /**
   * Stops every part in reverse order, each within its grace period; `onStopped` hears of
   * each part that was running (or starting) when its turn came.
   */
  async stopAll(onStopped?: (part: Part, result: { ms: number; exit: ExitInfo | undefined }) => void): Promise<void> {
    for (const part of [...this.parts].reverse()) {
      const t0 = performance.now();
      const { exit } = await part.stop();
      if (exit) onStopped?.(part, { ms: performance.now() - t0, exit });
    }
  }

  /** Last resort: SIGKILL to every part's process group, no waiting. */
  killAll(): void {
    for (const part of [...this.parts].reverse()) part.kill();
  }
}
