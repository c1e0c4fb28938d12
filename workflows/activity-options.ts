// How a saga reaches its activities: the two option profiles, and the one place that
// picks the activity kind. Today every call is a regular activity, scheduled on the task
// queue; making the steps local activities changes `activitiesWith` and the profiles'
// types here, and nothing in the sagas.
import { proxyActivities, type ActivityInterfaceFor, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { BUSINESS_ERRORS, TERMINAL_ERRORS, type OperationSettings } from './contracts.js';

/** The activities as a saga calls them: `call.chargePayment(target, charge)`. */
export type SagaActivities = ActivityInterfaceFor<Activities>;

/**
 * Forward steps: retried with the same downstream key until the reconciliation deadline
 * (schedule-to-close); business and terminal failures are final at once.
 */
export function retriedUntilDeadline(settings: OperationSettings): ActivityOptions {
  return {
    scheduleToCloseTimeout: settings.stepDeadlineMs,
    startToCloseTimeout: Math.min(10_000, settings.stepDeadlineMs),
    retry: {
      initialInterval: '250ms',
      backoffCoefficient: 2,
      maximumInterval: '5s',
      nonRetryableErrorTypes: [...Object.keys(BUSINESS_ERRORS), ...TERMINAL_ERRORS],
    },
  };
}

/** Compensations: no deadline and no attempt limit (the saga re-runs one that still gives up). */
export const retriedUntilDone: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
};

/** The activities under a profile, with the one-line summary the Temporal UI shows for the call. */
export function activitiesWith(profile: ActivityOptions, summary: string): SagaActivities {
  return proxyActivities<Activities>({ ...profile, summary });
}
