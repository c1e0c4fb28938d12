// notifyCompletion: tells a tenant's webhook that one of its operations ended, at least once.
//
//   operation starts ─▶ startChild(notifyCompletion)          (only for a tenant with a webhook)
//                        │ waits: no timer, no activity
//   operation closes ──▶ its parent close policy asks this workflow to cancel: the server's own
//                        │ durable notice that the operation is over
//                        ├─▶ prepareCompletionEvent: the operation as the API answers it, made ONCE
//                        ├─▶ deliverCompletionEvent: POST, retried with back-off until the deadline
//                        └─▶ memo notification { delivered | failed, attempts }
//
// Why it starts with the operation rather than as it ends: the server drops a child start,
// or a signal, issued by a workflow in the task that closes it (its transfer task finds the
// parent closed and gives up), so a child started at the end must be acknowledged before the
// operation may close, one more round trip before the client gets its answer. Started
// first, the acknowledgement arrives while the first step runs, and the close itself is
// the trigger.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setCurrentDetails,
  startChild,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { NotificationInput, NotificationState, NotifySettings, TraceCarrier } from './contracts.js';
import { completionEventId, notificationWorkflowId, type OperationRef } from './identity.js';
import { markdownCode } from './markdown.js';

/**
 * Patch ID of a `webhook-id` that holds the operation's run ID (`<tenant>/<key>/<runId>/completed`).
 * The ID is chosen here, in the workflow, behind a patch, rather than by the delivery
 * activity: it is then chosen once and recorded, the same on every redelivery and whichever
 * worker makes it, and a notification that started before keeps the ID it started with
 * (`<tenant>/<key>/completed`), which its earlier POSTs carried and its receiver may already
 * deduplicate on. The patch also keeps the activity summaries such a notification recorded.
 */
const RUN_SCOPED_EVENT_ID = 'run-scoped-webhook-id';

/** The back-off of redeliveries doubles from 1 s up to a hundredth of the deadline, at most 5 min. */
export function redeliveryCapMs(deadlineMs: number): number {
  return Math.min(300_000, Math.max(1_000, Math.floor(deadlineMs / 100)));
}

/** Both activities retry until the deadline; the HTTP call has its own shorter timeout. */
function retriedUntilDeadline(deadlineMs: number) {
  return {
    scheduleToCloseTimeout: deadlineMs,
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: redeliveryCapMs(deadlineMs) },
  } as const;
}

/** The POSTs made so far, as the delivery activity reports them on every failed attempt. */
function attemptsOf(err: unknown): number {
  for (let cause: unknown = err; cause instanceof Error; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof ApplicationFailure) {
      const attempt = (cause.details?.[0] as { attempt?: unknown } | undefined)?.attempt;
      if (typeof attempt === 'number') return attempt;
    }
  }
  return 0;
}

export async function notifyCompletion(input: NotificationInput): Promise<NotificationState> {
  const { operation, deadlineMs } = input;
  // The notification is the operation's child: its parent is the run the event is about.
  const eventId = patched(RUN_SCOPED_EVENT_ID)
    ? completionEventId(operation, workflowInfo().parent?.runId)
    : completionEventId(operation);
  setCurrentDetails(`waiting for ${markdownCode(operation.workflowId)} to end · webhook-id ${markdownCode(eventId)}`);
  await CancellationScope.current().cancelRequested.catch(() => undefined);

  // From here on nothing cancels the delivery: it ends delivered, or failed at its deadline.
  return CancellationScope.nonCancellable(async () => {
    const options = retriedUntilDeadline(deadlineMs);
    const { prepareCompletionEvent } = proxyActivities<Activities>({ ...options, summary: `prepare event ${eventId}` });
    const { deliverCompletionEvent } = proxyActivities<Activities>({ ...options, summary: `POST event ${eventId}` });
    let state: NotificationState;
    try {
      const event = await prepareCompletionEvent(input);
      setCurrentDetails(`delivering ${markdownCode(eventId)} to tenant **${operation.tenant}**'s webhook`);
      const { attempts } = await deliverCompletionEvent(operation, event, eventId);
      state = { status: 'delivered', attempts };
    } catch (err) {
      state = { status: 'failed', attempts: attemptsOf(err) };
      const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
      log.warn('completion webhook not delivered by its deadline', { ...logMeta(operation), attempts: state.attempts, why });
    }
    upsertMemo({ notification: state });
    setCurrentDetails(
      `${markdownCode(eventId)} **${state.status}** after ${state.attempts} attempt${state.attempts === 1 ? '' : 's'} · tenant **${operation.tenant}**`,
    );
    return state;
  });
}

function logMeta(operation: OperationRef): Record<string, string> {
  return { tenant: operation.tenant, key: operation.key, workflowId: operation.workflowId };
}

/**
 * Starts the operation's notification workflow; resolves once the server has started it
 * (the operation must not close before that) and never rejects: a webhook that cannot be
 * started must not fail the operation. Shielded, so a cancel of the operation leaves its
 * notification running.
 */
export function startNotification(operation: OperationRef, notify: NotifySettings, trace?: TraceCarrier): Promise<void> {
  return CancellationScope.nonCancellable(async () => {
    try {
      await startChild(notifyCompletion, {
        workflowId: notificationWorkflowId(operation),
        args: [
          {
            operation,
            deadlineMs: notify.deadlineMs,
            ...(notify.temporalUiUrl ? { temporalUiUrl: notify.temporalUiUrl } : {}),
            ...(trace ? { trace } : {}),
          },
        ],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: `completion webhook of ${markdownCode(operation.workflowId)}`,
      });
    } catch (err) {
      // The ID is still held by the notification of an earlier operation under the same key
      // (its key expired while that delivery kept retrying): this one goes without.
      log.warn('completion webhook not started', { ...logMeta(operation), error: String(err) });
    }
  });
}
