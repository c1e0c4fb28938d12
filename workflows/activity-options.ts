// How a saga reaches its activities: the option profiles, each with its activity kind, and
// the one place that picks the kind of each call.
//
// A forward step runs first as ONE LOCAL attempt: the worker that runs the workflow task
// makes the call and records its outcome as a marker, so a step that answers at once costs
// no task-queue round trip, and an operation usually finishes within a single workflow
// task. A worker that dies mid-attempt leaves no marker: the next worker replays the
// workflow and makes the attempt again, with the same downstream key, so the downstream
// answers with what it stored.
//
// A step whose first attempt failed transiently is retried as a REGULAR activity, with
// the same key, until the rest of its reconciliation deadline: the server owns that
// deadline and the back-off (no history event per attempt, a worker restart does not move
// the deadline), and the Web UI shows the step as a pending activity with its attempt count
// and last failure. (Local retries would not do: the SDK loses a local activity's
// schedule-to-close timeout when it fires during a local back-off, and long local retries
// keep the workflow task heartbeating, an event batch every few seconds.)
//
// Compensations are REGULAR activities throughout: they are rare, have no deadline and may
// retry for hours while a downstream is down, which is what an operator watches when an
// operation needs attention.
import { proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { OperationSettings } from './contracts.js';
import { FINAL_FAILURE_TYPES, isFinal } from './failures.js';

/**
 * The activities as a saga calls them, by the name a definition gives: the hand-written ones
 * and the generic service activity alike.
 */
export type SagaActivities = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** Options with the kind of activity they are for. */
export type ActivityProfile = { kind: 'local'; options: LocalActivityOptions } | { kind: 'regular'; options: ActivityOptions };

/** Longest single attempt of a step (above the downstream's own timeout). */
const ATTEMPT_MS = 10_000;

/** A forward step's first attempt, in the worker: one try, within the deadline. */
export function firstAttempt(settings: OperationSettings): ActivityProfile {
  return {
    kind: 'local',
    options: {
      startToCloseTimeout: Math.min(ATTEMPT_MS, settings.stepDeadlineMs),
      scheduleToCloseTimeout: settings.stepDeadlineMs,
      retry: { maximumAttempts: 1 },
    },
  };
}

/**
 * A forward step after a transient failure: retried with the same downstream key until the
 * deadline (schedule-to-close, what is left of it); business and terminal failures are
 * final at once.
 */
export function retriedUntilDeadline(remainingMs: number): ActivityProfile {
  return {
    kind: 'regular',
    options: {
      scheduleToCloseTimeout: remainingMs,
      startToCloseTimeout: Math.min(ATTEMPT_MS, remainingMs),
      retry: {
        initialInterval: '250ms',
        backoffCoefficient: 2,
        maximumInterval: '5s',
        nonRetryableErrorTypes: [...FINAL_FAILURE_TYPES],
      },
    },
  };
}

/** Compensations: no deadline and no attempt limit (the saga re-runs one that still gives up). */
export const retriedUntilDone: ActivityProfile = {
  kind: 'regular',
  options: {
    startToCloseTimeout: '10s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
};

/**
 * The activities under a profile, with the one-line summary the Temporal UI shows for the
 * call (on the activity's scheduled event, or on a local activity's marker).
 */
export function activitiesWith(profile: ActivityProfile, summary: string): SagaActivities {
  return profile.kind === 'local'
    ? proxyLocalActivities<SagaActivities>({ ...profile.options, summary })
    : proxyActivities<SagaActivities>({ ...profile.options, summary });
}

/**
 * Runs a forward step's call: one local attempt, then, after a transient failure, regular
 * retries for the rest of the deadline. Throws what the last attempt failed with.
 */
export function runStep<T>(
  settings: OperationSettings,
  summary: string,
  call: (activities: SagaActivities) => Promise<T>,
): Promise<T> {
  const startedAt = workflowNow();
  const remainingMs = () => settings.stepDeadlineMs - (workflowNow() - startedAt);
  // One promise for the step, not an async function's and its await's (each costs the SDK a stack capture).
  return call(activitiesWith(firstAttempt(settings), summary)).catch((err: unknown) => {
    if (isFinal(err) || remainingMs() <= 0) throw err;
    return call(activitiesWith(retriedUntilDeadline(remainingMs()), summary));
  });
}

/**
 * Workflow time: inside a workflow the SDK's Date is the time of the activation being
 * processed (a local activity's result advances it), the same on replay; never the
 * machine's clock. Read here only, to hand a step's retries the rest of its deadline.
 */
function workflowNow(): number {
  // eslint-disable-next-line no-restricted-properties -- deterministic workflow time, see above
  return Date.now();
}
