// The long poll behind `Prefer: wait=N`: a POST waits until the workflow closes, the time
// is up, or the caller went away, and the long poll is cancelled on the way out so no RPC
// outlives its request. On shutdown every pending wait ends at once: its request answers
// 202 with the operation still running instead of holding the close.
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';

/** The workflow's return value, when a wait saw it complete. */
export type KnownOutcome = { value: unknown } | undefined;

export class OutcomeWaits {
  private readonly pending = new Set<AbortController>();
  private closed = false;

  constructor(private readonly client: Client) {}

  /** Waits up to `waitMs`; the return value when the workflow completed meanwhile. */
  async wait(handle: WorkflowHandle, waitMs: number, signal?: AbortSignal): Promise<KnownOutcome> {
    if (this.closed || signal?.aborted) return undefined;
    // The long poll returns the result itself: kept, so the read after it need not fetch it again.
    let outcome: KnownOutcome;
    const abort = new AbortController();
    const onCallerGone = () => abort.abort();
    signal?.addEventListener('abort', onCallerGone, { once: true });
    this.pending.add(abort);
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      abort.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const closed = this.client
      .withAbortSignal(abort.signal, () => handle.result())
      .then(
        (value: unknown) => {
          outcome = { value };
        },
        (err: unknown) => {
          // Closed without a value (failed, terminated, timed out): the read tells which.
          if (err instanceof WorkflowFailedError || abort.signal.aborted) return;
          throw err;
        },
      );
    try {
      await Promise.race([closed, stopped]);
    } finally {
      clearTimeout(timer);
      abort.abort();
      this.pending.delete(abort);
      signal?.removeEventListener('abort', onCallerGone);
    }
    return outcome;
  }

  /** Ends every pending wait, and makes later ones return at once. */
  close(): void {
    this.closed = true;
    for (const wait of this.pending) wait.abort();
  }
}
