// The API's resources as plain types. They are written out here, not derived from the
// server's schemas, so the package's declarations stand on their own; the repository's
// typecheck compares them with the API's schemas (test/client/types.unit.test.ts), so a field
// the API adds, renames or retypes fails the build until the client follows.

import type { OperationRequests, OperationResults } from './operations.js';

/** A built-in operation type, or one an API adds (an operation loaded from outside retrysafe). */
export type OperationType = keyof OperationRequests | (string & {});
export type OperationStatus = 'processing' | 'succeeded' | 'failed';
export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'fenced' | 'compensated';
export type NotificationStatus = 'pending' | 'delivered' | 'failed';

export interface OperationStep {
  name: string;
  status: StepStatus;
  /** The key the step used at the downstream service: `<tenant>/<key>/charge`. */
  downstreamKey: string;
}

export interface OperationError {
  /** Stable code: insufficient_funds, payment_unavailable, cancelled, ... */
  code: string;
  message: string;
  /** Compensations that ran, in the order they ran. */
  compensations: string[];
}

/** The completion webhook of a tenant that has one. */
export interface OperationNotification {
  status: NotificationStatus;
  /** Deliveries tried so far. */
  attempts: number;
}

/** The operation resource: every answer about an operation has this shape. */
export interface Operation {
  key: string;
  type: OperationType;
  status: OperationStatus;
  /** Current (or last) step; null before the first. */
  step: string | null;
  createdAt: string;
  completedAt: string | null;
  /** Present when succeeded: `chargeId`, `reservationId`, `debitId`, ... */
  result?: Record<string, string>;
  /** Present when failed. */
  error?: OperationError;
  steps: OperationStep[];
  /** An operator should look: a compensation keeps failing, the worker refused its definition, or its workflow tasks keep failing. */
  needsAttention: boolean;
  /** Why it needs attention, when it does. */
  attentionReason?: string;
  /** The definition the operation started with and finishes on; its version is the same for every operation started on it. */
  definition?: { version: string };
  /** `temporalUi`: the execution in the operators' Web UI, only where the operator shows it to tenants. */
  links: { self: string; temporalUi?: string };
  /** A cancel was requested; the operation stops at its next step boundary. */
  cancelRequested: boolean;
  /** When the key will be forgotten (completion + the retention); null while processing. */
  keyExpiresAt: string | null;
  /** Present when the tenant has a completion webhook. */
  notification?: OperationNotification;
  /** The operation's OpenTelemetry trace ID, when the API traces: look it up in the trace viewer. */
  traceId?: string;
}

export interface OperationList {
  /** Newest first; built from the visibility store, so result and error are left out. */
  operations: Operation[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** `GET /v1/operations` filter. */
export interface ListFilter {
  status?: OperationStatus;
  type?: OperationType;
  /** Only operations started on this definition version (`definition.version`). */
  version?: string;
  limit?: number;
  cursor?: string;
}

/** The stable `code` of every problem the API answers with. */
export type ProblemCode =
  | 'invalid_request'
  | 'idempotency_key_missing'
  | 'idempotency_key_invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'idempotency_key_reused'
  | 'operation_not_found'
  | 'operation_already_completed'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'request_timeout'
  | 'rate_limited'
  | 'engine_unavailable'
  | 'engine_busy'
  | 'shutting_down'
  | 'internal_error';

/** RFC 9457 problem details as the API sends them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  /** invalid_request: one entry per bad field or header. */
  errors?: Array<{ field: string; message: string }>;
  /** idempotency_key_reused: names of the fields that differ. */
  differences?: string[];
}

/** The body of a completion webhook (Standard Webhooks; `webhook-id: <tenant>/<key>/completed`). */
export interface WebhookEvent {
  type: 'operation.succeeded' | 'operation.failed';
  timestamp: string;
  data: Operation;
}

export type SucceededOperation = Operation & { status: 'succeeded' };
export type FailedOperation = Operation & { status: 'failed'; error: OperationError };

/** How a logical call went: the key it used on every request, and what the API said. */
export interface CallMeta {
  /** The Idempotency-Key sent on every request of this call (given, or generated). */
  key: string;
  /** The API answered `Idempotent-Replayed: true`: this call did not start the operation. */
  replayed: boolean;
  /** HTTP requests made: POST attempts plus status polls. */
  requests: number;
}

/** What a succeeded operation of a built-in type `T` holds: its type, and its own result fields. */
type SucceededAs<T extends string> = string extends T
  ? unknown
  : T extends keyof OperationResults
    ? { type: T; result: OperationResults[T] }
    : unknown;

/**
 * A succeeded operation; of a built-in type `T`, with that type's result fields
 * (`OperationResult<'payment'>['result']['chargeId']`). `meta` is not enumerable, so
 * `JSON.stringify(result)` is exactly the API's operation resource.
 */
export type OperationResult<T extends string = string> = SucceededOperation & SucceededAs<T> & { readonly meta: CallMeta };
