// The long poll behind `Prefer: wait=N`: a POST waits until the workflow closes, the time
// is up, or the caller went away, and the long poll is cancelled on the way out so no RPC
// outlives its request. On shutdown every pending wait ends at once: its request answers
// 202 with the operation still running instead of holding the close.
//
// The poll asks the workflow service for the close event itself (what the SDK's result()
// does under the hood) rather than for the result alone: the event also carries the close
// time, and with the facts the workflow returns that is all a new operation's answer
// needs, so no describe follows.
import type { Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { decodePayload, decodeTimestamp } from './decode.js';

/** What a wait saw: the workflow's return value and close time when it completed. */
export type KnownOutcome = { value: unknown; closedAt: Date } | undefined;

const CLOSE_EVENT = proto.temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;

export class OutcomeWaits {
  private readonly pending = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly namespace: string,
  ) {}

  /** Waits up to `waitMs`; the return value and close time when the workflow completed meanwhile. */
  async wait(handle: WorkflowHandle, waitMs: number, signal?: AbortSignal): Promise<KnownOutcome> {
    if (this.closed || signal?.aborted) return undefined;
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
      .withAbortSignal(abort.signal, () => this.closeEvent(handle.workflowId))
      .then(
        async (event) => {
          const completed = event.workflowExecutionCompletedEventAttributes;
          // Closed without a value (failed, terminated, timed out): the read tells which.
          if (!completed) return;
          const payload = completed.result?.payloads?.[0];
          const closedAt = decodeTimestamp(event.eventTime);
          if (!payload || !closedAt) return;
          outcome = { value: await decodePayload(this.client, this.namespace, handle.workflowId, payload), closedAt };
        },
        (err: unknown) => {
          if (abort.signal.aborted) return;
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

  /**
   * The close event of the workflow's one run (REJECT_DUPLICATE: a workflow ID has one run),
   * long-polled: the service answers an empty page when its own poll interval ends first.
   */
  private async closeEvent(workflowId: string): Promise<proto.temporal.api.history.v1.IHistoryEvent> {
    let nextPageToken: Uint8Array | undefined;
    for (;;) {
      const res = await this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.namespace,
        execution: { workflowId },
        skipArchival: true,
        waitNewEvent: true,
        historyEventFilterType: CLOSE_EVENT,
        nextPageToken,
      });
      const event = res.history?.events?.[0];
      if (event) return event;
      nextPageToken = res.nextPageToken ?? undefined;
    }
  }
}
