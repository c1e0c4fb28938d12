// RFC 9457 problem details. Every error answer of the sandbox services is one of these,
// with a stable machine-readable `code`; clients branch on `code`, never on `detail`.
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extension: string]: unknown;
}

/** A field-level validation message, as listed in `errors` of an `invalid_request`. */
export interface FieldError {
  field: string;
  message: string;
}

export function problemType(code: string): string {
  return `urn:retrysafe:problem:${code}`;
}

export function problemBody(
  status: number,
  code: string,
  detail: string,
  extensions: Record<string, unknown> = {},
): ProblemBody {
  // Standard members first (and never overridden by an extension of the same name).
  const body: ProblemBody = { type: problemType(code), title: STATUS_CODES[status] ?? 'Error', status, detail, code };
  for (const [name, value] of Object.entries(extensions)) {
    if (!(name in body)) body[name] = value;
  }
  return body;
}

/**
 * Thrown anywhere in a request; the shared error handler turns it into a problem answer.
 * `headers` lets an error carry e.g. `Retry-After`.
 */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
  }

  get body(): ProblemBody {
    return problemBody(this.status, this.code, this.detail, this.extensions);
  }
}

export function isProblemError(err: unknown): err is ProblemError {
  return err instanceof ProblemError;
}

export function sendProblem(reply: FastifyReply, problem: ProblemBody, headers: Record<string, string> = {}): FastifyReply {
  // Sent as a string so no response schema can strip extension members such as `errors`.
  return reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}
