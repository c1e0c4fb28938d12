// The one place where errors become answers. Known classes map to their problem; an
// unreachable engine is a 503 the client may retry; anything else is a 500 whose cause
// goes to the log and never into the body.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isEngineUnavailable } from './engine-errors.js';
import { ApiProblem, PROBLEM_CONTENT_TYPE, problems } from './problems.js';

const FASTIFY_PROBLEMS: Record<string, (err: FastifyError) => ApiProblem> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiProblem(413, 'payload_too_large', 'the request body exceeds the size limit'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiProblem(415, 'unsupported_media_type', 'send the body as application/json'),
  FST_ERR_CTP_INVALID_JSON_BODY: () =>
    problems.invalidRequest('the body is not valid JSON', [{ field: 'body', message: 'is not valid JSON' }]),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    problems.invalidRequest('the body is empty', [{ field: 'body', message: 'must be a JSON object' }]),
};

export function toProblem(err: unknown): ApiProblem {
  if (err instanceof ApiProblem) return err;
  if (isEngineUnavailable(err)) return problems.engineUnavailable();
  const fastifyErr = err as Partial<FastifyError>;
  const mapped = typeof fastifyErr.code === 'string' ? FASTIFY_PROBLEMS[fastifyErr.code] : undefined;
  if (mapped) return mapped(fastifyErr as FastifyError);
  const status = fastifyErr.statusCode;
  // Other client errors raised by Fastify itself (bad URL encoding, a poisoned JSON body, ...).
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const detail = typeof fastifyErr.message === 'string' && fastifyErr.message !== '' ? fastifyErr.message : 'bad request';
    return status === 413
      ? new ApiProblem(413, 'payload_too_large', detail)
      : status === 415
        ? new ApiProblem(415, 'unsupported_media_type', detail)
        : problems.invalidRequest(detail, []);
  }
  return problems.internal();
}

/** Path of the request without its query string: the problem's `instance`. */
function instanceOf(request: FastifyRequest): string {
  const url = request.url;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ApiProblem): FastifyReply {
  return reply
    .code(problem.status)
    .headers(problem.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problem.body(instanceOf(request)));
}

export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = toProblem(err);
  if (problem.status >= 500 && problem.code === 'engine_unavailable') {
    request.log.warn({ err }, 'temporal unavailable');
  } else if (problem.status >= 500) {
    request.log.error({ err }, 'request failed');
  }
  return sendProblem(request, reply, problem);
}
