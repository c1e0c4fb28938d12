// The long poll behind `Prefer: wait=N`: a POST waits until the workflow closes, the time
// is up, or the caller went away. The requests waiting on one workflow here (a client's
// retries racing its first try) share one long poll: each has its own deadline, and the
// last to stop waiting cancels the poll, so no RPC outlives its requests. On shutdown every
// pending wait ends at once: its request answers 202 with the operation still running
// instead of holding the close.
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

/** One long poll for a workflow's close, shared by every request waiting on it here. */
interface SharedPoll {
  outcome: Promise<KnownOutcome>;
  abort: AbortController;
  waiters: number;
}

export class OutcomeWaits {
  private readonly polls = new Map<string, SharedPoll>();
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly namespace: string,
  ) {}

  /** Long polls in flight (one per workflow waited on, however many requests wait). */
  get polling(): number {
    return this.polls.size;
  }

  /** Waits up to `waitMs`; the return value and close time when the workflow completed meanwhile. */
  async wait(handle: WorkflowHandle, waitMs: number, signal?: AbortSignal): Promise<KnownOutcome> {
    if (this.closed || signal?.aborted) return undefined;
    const { workflowId } = handle;
    const poll = this.pollFor(workflowId);
    poll.waiters++;
    let timer: NodeJS.Timeout | undefined;
    let stop: () => void = () => undefined;
    const stopped = new Promise<undefined>((resolve) => {
      stop = () => resolve(undefined);
      timer = setTimeout(stop, waitMs);
      signal?.addEventListener('abort', stop, { once: true });
      // Shutdown ends every wait at once.
      poll.abort.signal.addEventListener('abort', stop, { once: true });
    });
    try {
      return await Promise.race([poll.outcome, stopped]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      poll.abort.signal.removeEventListener('abort', stop);
      // The last request to stop waiting cancels the poll, so no RPC outlives its requests.
      if (--poll.waiters === 0) {
        poll.abort.abort();
        if (this.polls.get(workflowId) === poll) this.polls.delete(workflowId);
      }
    }
  }

  /** The poll in flight for `workflowId`, or a new one. */
  private pollFor(workflowId: string): SharedPoll {
    const known = this.polls.get(workflowId);
    if (known) return known;
    const abort = new AbortController();
    const outcome = this.client
      .withAbortSignal(abort.signal, () => this.closeEvent(workflowId))
      .then(
        async (event): Promise<KnownOutcome> => {
          const completed = event.workflowExecutionCompletedEventAttributes;
          // Closed without a value (failed, terminated, timed out): the read tells which.
          if (!completed) return undefined;
          const payload = completed.result?.payloads?.[0];
          const closedAt = decodeTimestamp(event.eventTime);
          if (!payload || !closedAt) return undefined;
          return { value: await decodePayload(this.client, this.namespace, workflowId, payload), closedAt };
        },
        (err: unknown) => {
          if (abort.signal.aborted) return undefined;
          throw err;
        },
      );
    const poll: SharedPoll = { outcome, abort, waiters: 0 };
    this.polls.set(workflowId, poll);
    // A settled poll answers only its waiters: a later request for a closed workflow asks again (and is answered at once).
    outcome
      .finally(() => {
        if (this.polls.get(workflowId) === poll) this.polls.delete(workflowId);
      })
      .catch(() => undefined);
    return poll;
  }

  /** Ends every pending wait, and makes later ones return at once. */
  close(): void {
    this.closed = true;
    for (const poll of this.polls.values()) poll.abort.abort();
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
