// What a call can end in besides success. Each error carries the idempotency key, so a
// caller that catches anything can always resume or retry the same logical operation.
import type { FailedOperation, Operation, ProblemCode } from './types.js';

/** Codes the client gives to failures that carry no problem from the API. */
export type ClientErrorCode = 'network_error' | 'timeout' | 'invalid_response' | 'unknown_operation_type' | `http_${number}`;

/**
 * The `code` of an ApiError: one of the API's problem codes, or the client's own. Any
 * other string is a code from a newer API, passed on as it came.
 */
export type ApiErrorCode = ProblemCode | ClientErrorCode | (string & {});

/** The problem details the API sent, or what the client could make of a non-API answer. */
export interface ProblemDetails {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code: ApiErrorCode;
  errors?: Array<{ field: string; message: string }>;
  differences?: string[];
  [extra: string]: unknown;
}

/** Base of every error the client throws on purpose. */
export class RetrySafeError extends Error {
  constructor(
    message: string,
    /** The operation's idempotency key; undefined only for calls not about one (`list`). */
    readonly key: string | undefined,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The API refused the call (400, 401, 404, 500...), or did not answer within the retry
 * budget (`status` null: network error or timeout). When `retryable` is true the outcome
 * is unknown and calling again with the same `key` is safe: it can never start a second
 * operation.
 */
export class ApiError extends RetrySafeError {
  constructor(
    message: string,
    key: string | undefined,
    /** HTTP status, or null when no answer arrived. */
    readonly status: number | null,
    /** The problem `code` (`unauthorized`, `operation_not_found`...), or `network_error`, `timeout`, `invalid_response`. */
    readonly code: ApiErrorCode,
    readonly retryable: boolean,
    readonly problem?: ProblemDetails,
    /** Requests made before giving up. */
    readonly attempts = 1,
    options?: { cause?: unknown },
  ) {
    super(message, key);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** 422 `idempotency_key_reused`: this key already names an operation with another request. */
export class IdempotencyConflictError extends ApiError {
  /** Names of the request fields that differ (`["amount"]`). */
  readonly differences: string[];

  constructor(key: string, problem: ProblemDetails, attempts = 1) {
    super(
      problem.detail ?? 'the idempotency key was used for a different request',
      key,
      422,
      problem.code,
      false,
      problem,
      attempts,
    );
    this.differences = problem.differences ?? [];
  }
}

/**
 * 409 `operation_already_completed`: a cancel came after the operation had ended. The
 * operation is not changed; `operations.get(key)` shows how it ended.
 */
export class OperationAlreadyCompletedError extends ApiError {
  constructor(key: string, problem: ProblemDetails, attempts = 1) {
    super(
      problem.detail ?? 'the operation has already completed; there is nothing to cancel',
      key,
      409,
      problem.code,
      false,
      problem,
      attempts,
    );
  }
}

/** The operation finished with a business failure (`insufficient_funds`, `out_of_stock`...). */
export class OperationFailedError extends RetrySafeError {
  /** The operation's error code. */
  readonly code: string;
  /** Compensations that ran, in the order they ran. */
  readonly compensations: string[];

  constructor(readonly operation: FailedOperation) {
    super(`${operation.type} ${operation.key} failed: ${operation.error.code}: ${operation.error.message}`, operation.key);
    this.code = operation.error.code;
    this.compensations = operation.error.compensations;
  }
}

/**
 * The deadline passed and the operation is still running. It was started and will finish
 * on its own: resume with `operations.wait(key)`; never start it again under a new key.
 */
export class OperationPendingError extends RetrySafeError {
  declare readonly key: string;

  constructor(
    key: string,
    /** The last state seen. */
    readonly operation: Operation,
  ) {
    super(`operation ${key} is still processing (step ${operation.step ?? 'none'}); resume with operations.wait(key)`, key);
  }
}
