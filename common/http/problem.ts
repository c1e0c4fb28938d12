// RFC 9457 problem details: the one way every retrysafe HTTP service (the API and both
// sandboxes) answers an error. A handler or hook throws a Problem; the service's one error
// handler sends it. Each service keeps its own codes (and the API its own titles); the
// shape, the media type and the sending are the same everywhere. Clients branch on `code`,
// never on `title` or `detail`.
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One entry of an `invalid_request` problem's `errors`. */
export interface FieldError {
  field: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  [extension: string]: unknown;
}

export function problemType(code: string): string {
  return `urn:retrysafe:problem:${code}`;
}

export interface ProblemOptions {
  /** A short summary of the code; the status's reason phrase when omitted. */
  title?: string;
  /** Extension members (`errors`, `differences`, ...); a standard member always wins. */
  extensions?: Record<string, unknown>;
  /** Headers the answer carries, such as `Retry-After` or `WWW-Authenticate`. */
  headers?: Record<string, string>;
}

/** An error that is its own answer: thrown anywhere in a request, sent by the error handler. */
export class Problem<Code extends string = string> extends Error {
  readonly title: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: Code,
    readonly detail: string,
    opts: ProblemOptions = {},
  ) {
    // A problem is an answer, not a fault: where it was made tells nothing, and capturing the
    // stack would be most of what a refusal's answer costs under a flood.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'Problem';
    this.title = opts.title ?? STATUS_CODES[status] ?? 'Error';
    this.extensions = opts.extensions ?? {};
    this.headers = opts.headers ?? {};
  }

  /** The document; `instance` is the path the problem occurred at, when the service names it. */
  body(instance?: string): ProblemBody {
    const body: ProblemBody = {
      type: problemType(this.code),
      title: this.title,
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...(instance !== undefined ? { instance } : {}),
    };
    for (const [name, value] of Object.entries(this.extensions)) {
      if (!(name in body)) body[name] = value;
    }
    return body;
  }
}

/**
 * Sends a problem with its status, headers and media type. The document is serialised
 * here, so no response schema can drop or reorder an extension member.
 */
export function sendProblem(reply: FastifyReply, problem: Problem, instance?: string): FastifyReply {
  return reply
    .code(problem.status)
    .headers(problem.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem.body(instance)));
}
