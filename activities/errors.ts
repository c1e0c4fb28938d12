// Failures activities raise. The class name is the failure `type` Temporal records: the
// workflow maps a business type to the code the operation reports (BUSINESS_ERRORS in
// workflows/contracts.ts), and lists the business and terminal types as non-retryable.
// (The SDK takes the type from the constructor name, so never rename these casually.)

/** A downstream service refused the request for a business reason; retrying won't help. */
export abstract class BusinessError extends Error {}

export class InsufficientFundsError extends BusinessError {}
export class AccountNotFoundError extends BusinessError {}
export class CurrencyMismatchError extends BusinessError {}
export class OutOfStockError extends BusinessError {}
export class UnknownSkuError extends BusinessError {}
export class ReservationExpiredError extends BusinessError {}

/** The key was fenced (reversed/released before the original arrived): the step never took effect. */
export class ChargeFencedError extends Error {}
export class ReservationFencedError extends Error {}

/** The downstream already holds this key for a different request: a bug, never retried. */
export class DownstreamConflictError extends Error {}

/** Transient: 5xx, 409 in flight, an unexpected answer. Retried until the step's deadline. */
export class DownstreamUnavailableError extends Error {}
