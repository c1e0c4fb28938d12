// Failures activities raise. A final "no" from a downstream is one failure type,
// DownstreamRefusal, carrying the answer's status and problem code: whether that code is a
// business refusal is for the step's definition to say, not for the activity. Anything
// else is transient and retried until the step's deadline.
import { ApplicationFailure } from '@temporalio/activity';

/** The failure type the saga reads (workflows/failures.ts). */
export const DOWNSTREAM_REFUSAL = 'DownstreamRefusal';

/** A downstream refused the call for good (a business reason, a fenced key, a key reused): never retried. */
export function downstreamRefusal(message: string, status: number, code: string): ApplicationFailure {
  return ApplicationFailure.create({ type: DOWNSTREAM_REFUSAL, message, nonRetryable: true, details: [{ status, code }] });
}

/** Transient: 5xx, 409 in flight, a timeout, an unexpected answer. Retried until the step's deadline. */
export class DownstreamUnavailableError extends Error {}
