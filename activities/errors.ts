// Failures activities raise. The class name is the failure `type` Temporal records, and
// the workflow's activity profiles list the business ones in nonRetryableErrorTypes.
// (The SDK takes the type from the constructor name, so never rename these casually.)

/** A downstream service refused the request for a business reason; retrying won't help. */
export abstract class BusinessError extends Error {
  abstract readonly code: string;
}

export class InsufficientFundsError extends BusinessError {
  readonly code = 'insufficient_funds';
}
export class AccountNotFoundError extends BusinessError {
  readonly code = 'account_not_found';
}
export class CurrencyMismatchError extends BusinessError {
  readonly code = 'currency_mismatch';
}
export class OutOfStockError extends BusinessError {
  readonly code = 'out_of_stock';
}
export class UnknownSkuError extends BusinessError {
  readonly code = 'unknown_sku';
}
export class ReservationExpiredError extends BusinessError {
  readonly code = 'reservation_expired';
}

/** The key was fenced (reversed/released before the original arrived): the step never took effect. */
export class ChargeFencedError extends Error {}
export class ReservationFencedError extends Error {}

/** The downstream already holds this key for a different request: a bug, never retried. */
export class DownstreamConflictError extends Error {}

/** Transient: 5xx, 409 in flight, an unexpected answer. Retried until the step's deadline. */
export class DownstreamUnavailableError extends Error {}
