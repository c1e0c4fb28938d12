// What a saga does when a step throws: a business error (the step took no effect) skips
// that step's compensation; anything else means the outcome is unknown at the step's
// reconciliation deadline, so the step is fenced by its own compensation. Either way the
// compensations registered so far run in reverse and the operation fails with a code.
import { ActivityFailure, ApplicationFailure, type ActivityOptions } from '@temporalio/workflow';
import {
  BUSINESS_ERRORS,
  TERMINAL_ERRORS,
  UNAVAILABLE_CODE,
  type BusinessErrorType,
  type CompensationName,
  type OperationOutcome,
  type OperationSettings,
  type StepName,
} from './contracts.js';
import { sagaMetrics } from './metrics.js';
import type { Progress } from './progress.js';
import type { Saga } from './saga.js';

const BUSINESS_TYPES = Object.keys(BUSINESS_ERRORS) as BusinessErrorType[];

/**
 * Activity-option profile of a forward step: retried with the same downstream key until
 * the reconciliation deadline (schedule-to-close); business errors are final at once.
 */
export function stepCall(settings: OperationSettings): ActivityOptions {
  return {
    scheduleToCloseTimeout: settings.stepDeadlineMs,
    startToCloseTimeout: Math.min(10_000, settings.stepDeadlineMs),
    retry: {
      initialInterval: '250ms',
      backoffCoefficient: 2,
      maximumInterval: '5s',
      nonRetryableErrorTypes: [...BUSINESS_TYPES, ...TERMINAL_ERRORS],
    },
  };
}

/** Activity-option profile of a compensation: no deadline, no attempt limit. */
export const compensationCall: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
};

/** Call-site option: the one-line summary of an activity in the Temporal UI. */
export function summary(text: string): ActivityOptions {
  return { summary: text };
}

export function businessError(err: unknown): { code: string; message: string } | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
    const type = err.cause.type as BusinessErrorType | undefined;
    if (type && type in BUSINESS_ERRORS) return { code: BUSINESS_ERRORS[type], message: err.cause.message };
  }
  return undefined;
}

export async function failStep(
  err: unknown,
  step: StepName,
  ownCompensation: CompensationName | null,
  saga: Saga,
  progress: Progress,
): Promise<OperationOutcome> {
  const business = businessError(err);
  const answer = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
  if (business) {
    progress.mark(step, 'failed', `${business.code} (${answer})`);
    if (ownCompensation) saga.discard(ownCompensation);
  } else {
    progress.mark(step, 'fenced', `outcome unknown at the deadline (${answer})`);
    sagaMetrics.fenced(step);
  }
  const compensations = await saga.compensate();
  if (compensations.length > 0) progress.describe(`compensations ran: ${compensations.join(', ')}`);
  for (const s of progress.steps) if (s.status === 'completed') s.status = 'compensated';
  if (business) return progress.fail({ ...business, compensations });
  return progress.fail({
    code: UNAVAILABLE_CODE[step],
    message: `the outcome of ${step} could not be reconciled before its deadline (${answer}); it was fenced and compensated`,
    compensations,
  });
}
