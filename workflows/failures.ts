// How the saga reads a step's failure. An activity that got a final "no" from its
// downstream raises a non-retryable DownstreamRefusal carrying the answer's status and
// problem code; whether that "no" is a business refusal is the step's definition's to say
// (its businessErrors), not the activity's. Anything else is transient, retried until the
// step's deadline.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { PROGRAM_REFUSED } from './contracts.js';

/** The failure type of a final refusal; its details carry `{ status, code }`. */
export const DOWNSTREAM_REFUSAL = 'DownstreamRefusal';

/**
 * Failure types recorded by activities of earlier releases, which raised one error class per
 * answer: histories that hold them must be read as they were, so each keeps its meaning here
 * (a business code, or a final refusal that is not one). Nothing raises them any more.
 */
const EARLIER_REFUSALS: Readonly<Record<string, string>> = {
  InsufficientFundsError: 'insufficient_funds',
  AccountNotFoundError: 'account_not_found',
  CurrencyMismatchError: 'currency_mismatch',
  OutOfStockError: 'out_of_stock',
  UnknownSkuError: 'unknown_sku',
  ReservationExpiredError: 'reservation_expired',
  ChargeFencedError: 'charge_fenced',
  ReservationFencedError: 'reservation_fenced',
  DownstreamConflictError: 'idempotency_key_reused',
};

/** Failure types a step never retries (a regular activity's retry policy lists them). */
export const FINAL_FAILURE_TYPES: readonly string[] = [DOWNSTREAM_REFUSAL, PROGRAM_REFUSED, ...Object.keys(EARLIER_REFUSALS)];

/** Whether the worker refused the call before making it: it lacks what the operation's program needs. */
export function programRefusal(err: unknown): boolean {
  const cause = activityCause(err);
  return cause instanceof ApplicationFailure && cause.type === PROGRAM_REFUSED;
}

/**
 * The failure an activity raised: a regular activity's comes wrapped in an ActivityFailure,
 * a local activity's may come as it is.
 */
export function activityCause(err: unknown): unknown {
  return err instanceof ActivityFailure && err.cause ? err.cause : err;
}

/** The downstream's problem code of a final refusal, or undefined when the failure was not one. */
export function refusalCode(err: unknown): string | undefined {
  const cause = activityCause(err);
  if (!(cause instanceof ApplicationFailure) || !cause.type) return undefined;
  if (cause.type === DOWNSTREAM_REFUSAL) {
    const code = (cause.details?.[0] as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' ? code : '';
  }
  return EARLIER_REFUSALS[cause.type];
}

/** Whether retrying cannot change the answer: a refusal, or a failure its activity marked final. */
export function isFinal(err: unknown): boolean {
  const cause = activityCause(err);
  return cause instanceof ApplicationFailure && (cause.nonRetryable || FINAL_FAILURE_TYPES.includes(cause.type ?? ''));
}

/** The failure's message for the operation's error and the Web UI. */
export function failureMessage(err: unknown): string {
  const cause = activityCause(err);
  return cause instanceof Error ? cause.message : String(cause);
}
