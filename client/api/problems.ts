// RFC 9457 problem details. Every error answer carries a stable `code`; clients branch on
// it, never on `title` or `detail`. 5xx answers say only what the client can act on: the
// cause stays in the log.

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const PROBLEM_TITLES = {
  invalid_request: 'The request is not valid',
  idempotency_key_missing: 'The Idempotency-Key header is missing',
  idempotency_key_invalid: 'The Idempotency-Key header is not valid',
  unauthorized: 'Missing or unknown API key',
  idempotency_key_reused: 'The idempotency key was used for a different request',
  operation_not_found: 'No operation has this key',
  not_found: 'No such resource',
  payload_too_large: 'The request body is too large',
  unsupported_media_type: 'The request body must be application/json',
  headers_too_large: 'The request headers are too large',
  request_timeout: 'The request did not arrive in time',
  engine_unavailable: 'The workflow engine is unavailable; retry with the same key',
  shutting_down: 'This API instance is shutting down; retry with the same key',
  internal_error: 'Internal error',
} as const;

export type ProblemCode = keyof typeof PROBLEM_TITLES;

export interface FieldError {
  field: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  errors?: FieldError[];
  differences?: string[];
}

export function problemType(code: ProblemCode): string {
  return `urn:retrysafe:problem:${code}`;
}

/** An error that becomes a problem answer as it is; thrown from hooks and handlers. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; differences?: string[] } = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiProblem';
  }

  body(instance?: string): ProblemBody {
    return {
      type: problemType(this.code),
      title: PROBLEM_TITLES[this.code],
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...(instance !== undefined ? { instance } : {}),
      ...this.extra,
    };
  }
}

export const ENGINE_RETRY_AFTER_SECONDS = 2;

export const problems = {
  invalidRequest: (detail: string, errors: FieldError[]) => new ApiProblem(400, 'invalid_request', detail, { errors }),
  unauthorized: () =>
    new ApiProblem(
      401,
      'unauthorized',
      'send an API key as "Authorization: Bearer <secret>"',
      {},
      { 'www-authenticate': 'Bearer' },
    ),
  keyReused: (differences: string[]) =>
    new ApiProblem(
      422,
      'idempotency_key_reused',
      differences.length > 0
        ? `this key already names an operation with a different request (differs in: ${differences.join(', ')}); use a new key for a new operation`
        : 'this key already names an operation with a different request; use a new key for a new operation',
      { differences },
    ),
  operationNotFound: () => new ApiProblem(404, 'operation_not_found', 'no operation with this key exists for this tenant'),
  notFound: (method: string, path: string) => new ApiProblem(404, 'not_found', `no route ${method} ${path}`),
  engineUnavailable: () =>
    new ApiProblem(
      503,
      'engine_unavailable',
      'the workflow engine did not answer in time; the request is safe to retry with the same Idempotency-Key',
      {},
      { 'retry-after': String(ENGINE_RETRY_AFTER_SECONDS) },
    ),
  shuttingDown: () =>
    new ApiProblem(
      503,
      'shutting_down',
      'this API instance is shutting down and started nothing; retry with the same Idempotency-Key',
      {},
      { 'retry-after': '1', connection: 'close' },
    ),
  internal: () => new ApiProblem(500, 'internal_error', 'the server failed to handle the request; it has been logged'),
};
