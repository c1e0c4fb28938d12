// The API's problem codes and titles. Every error answer carries a stable `code`; clients
// branch on it, never on `title` or `detail`. 5xx answers say only what the client can act
// on: the cause stays in the log.
import { Problem, type FieldError } from '../../common/http/problem.js';
import type { KeyResult } from '../../common/http/idempotency-key.js';

export const PROBLEM_TITLES = {
  invalid_request: 'The request is not valid',
  idempotency_key_missing: 'The Idempotency-Key header is missing',
  idempotency_key_invalid: 'The Idempotency-Key header is not valid',
  unauthorized: 'Missing or unknown API key',
  forbidden: 'This key may not use this resource',
  idempotency_key_reused: 'The idempotency key was used for a different request',
  operation_not_found: 'No operation has this key',
  operation_already_completed: 'The operation has already completed',
  not_found: 'No such resource',
  method_not_allowed: 'The method is not allowed on this resource',
  payload_too_large: 'The request body is too large',
  unsupported_media_type: 'The request body must be application/json',
  headers_too_large: 'The request headers are too large',
  request_timeout: 'The request did not arrive in time',
  rate_limited: 'This tenant is over its limit; retry after Retry-After (a new operation with the same key)',
  engine_unavailable: 'The workflow engine is unavailable; retry with the same key',
  engine_busy: 'The workflow engine is busy; retry with the same key',
  shutting_down: 'This API instance is shutting down; retry with the same key',
  internal_error: 'Internal error',
} as const;

export type ProblemCode = keyof typeof PROBLEM_TITLES;
export type ApiProblem = Problem<ProblemCode>;

export const ENGINE_RETRY_AFTER_SECONDS = 2;
/** An overloaded engine, or this instance at its bound, frees a place within a moment. */
export const ENGINE_BUSY_RETRY_AFTER_SECONDS = 1;

/** A problem of the API, titled from its catalogue. */
export function apiProblem(
  status: number,
  code: ProblemCode,
  detail: string,
  opts: { extensions?: Record<string, unknown>; headers?: Record<string, string> } = {},
): ApiProblem {
  return new Problem(status, code, detail, { ...opts, title: PROBLEM_TITLES[code] });
}

export const problems = {
  invalidRequest: (detail: string, errors: FieldError[]) =>
    apiProblem(400, 'invalid_request', detail, { extensions: { errors } }),
  idempotencyKey: (refused: Extract<KeyResult, { ok: false }>) => apiProblem(400, refused.code, refused.detail),
  unauthorized: (detail = 'send an API key as "Authorization: Bearer <secret>"') =>
    apiProblem(401, 'unauthorized', detail, { headers: { 'www-authenticate': 'Bearer' } }),
  metricsForbidden: () =>
    apiProblem(
      403,
      'forbidden',
      "the metrics are the operators': a tenant's API key is not accepted here (scrape from the API's machine, or with RETRYSAFE_METRICS_TOKEN)",
    ),
  keyReused: (differences: string[]) =>
    apiProblem(
      422,
      'idempotency_key_reused',
      differences.length > 0
        ? `this key already names an operation with a different request (differs in: ${differences.join(', ')}); use a new key for a new operation`
        : 'this key already names an operation with a different request; use a new key for a new operation',
      { extensions: { differences } },
    ),
  operationNotFound: () => apiProblem(404, 'operation_not_found', 'no operation with this key exists for this tenant'),
  operationAlreadyCompleted: (status: string) =>
    apiProblem(409, 'operation_already_completed', `the operation already ${status}; a cancel cannot change it`),
  notFound: (method: string, path: string) => apiProblem(404, 'not_found', `no route ${method} ${path}`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    apiProblem(405, 'method_not_allowed', `${method} is not allowed here; allowed: ${allowed.join(', ')}`, {
      headers: { allow: allowed.join(', ') },
    }),
  payloadTooLarge: (detail = 'the request body exceeds the size limit') => apiProblem(413, 'payload_too_large', detail),
  unsupportedMediaType: (detail = 'send the body as application/json') => apiProblem(415, 'unsupported_media_type', detail),
  headersTooLarge: () => apiProblem(431, 'headers_too_large', 'the request headers exceed 16 KiB'),
  requestTimeout: () => apiProblem(408, 'request_timeout', 'the request did not arrive in time'),
  engineUnavailable: () =>
    apiProblem(
      503,
      'engine_unavailable',
      'the workflow engine cannot take the request right now; it is safe to retry with the same Idempotency-Key',
      { headers: { 'retry-after': String(ENGINE_RETRY_AFTER_SECONDS) } },
    ),
  /** `limit` reads as "50 new operations per second". */
  rateLimited: (tenant: string, limit: string, retryAfterSeconds: number, headers: Record<string, string>) =>
    apiProblem(
      429,
      'rate_limited',
      `tenant ${tenant} is over its limit of ${limit}; nothing was started, retry in ${retryAfterSeconds} s with the same Idempotency-Key`,
      { headers: { ...headers, 'retry-after': String(retryAfterSeconds) } },
    ),
  /** Too many requests wait on one key at this instance: the key's operation is in flight, nothing new starts. */
  tooManyWaiters: (waiters: number, headers: Record<string, string>) =>
    apiProblem(
      429,
      'rate_limited',
      `${waiters} requests already wait on this key's operation at this API instance; it is in flight, retry in 1 s with the same Idempotency-Key`,
      { headers: { ...headers, 'retry-after': '1' } },
    ),
  /** `limit` reads as "50 reads, lists and cancels per second". */
  readsLimited: (tenant: string, limit: string, retryAfterSeconds: number, headers: Record<string, string>) =>
    apiProblem(
      429,
      'rate_limited',
      `tenant ${tenant} is over its limit of ${limit} at this API instance; retry in ${retryAfterSeconds} s`,
      { headers: { ...headers, 'retry-after': String(retryAfterSeconds) } },
    ),
  /** `bound`: this instance's own bound on operations in flight; `engine`: Temporal said it is overloaded. */
  engineBusy: (why: 'bound' | 'engine', retryAfterSeconds = ENGINE_BUSY_RETRY_AFTER_SECONDS) =>
    apiProblem(
      503,
      'engine_busy',
      why === 'bound'
        ? 'this tenant has its share of the new operations this API instance keeps in flight (as many as the workflow engine takes without slowing every answer); nothing was started, retry with the same Idempotency-Key'
        : 'the workflow engine refused the call as overloaded; nothing was started, retry with the same Idempotency-Key',
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  shuttingDown: () =>
    apiProblem(
      503,
      'shutting_down',
      'this API instance is shutting down and started nothing; retry with the same Idempotency-Key',
      { headers: { 'retry-after': '1', connection: 'close' } },
    ),
  internal: () => apiProblem(500, 'internal_error', 'the server failed to handle the request; it has been logged'),
};
