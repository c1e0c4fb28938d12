// The one place where the API's errors become answers. A Problem is sent as it is; an
// unreachable engine is a 503 the client may retry; Fastify's own refusals map to their
// problem; anything else is a 500 whose cause goes to the log and never into the body.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, sendProblem } from '../../common/http/problem.js';
import { isEngineBusy, isEngineUnavailable } from './engine-errors.js';
import { problems } from './problems.js';

const FASTIFY_PROBLEMS: Record<string, () => Problem> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => problems.payloadTooLarge(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => problems.unsupportedMediaType(),
  FST_ERR_CTP_INVALID_JSON_BODY: () =>
    problems.invalidRequest('the body is not valid JSON', [{ field: 'body', message: 'is not valid JSON' }]),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    problems.invalidRequest('the body is empty', [{ field: 'body', message: 'must be a JSON object' }]),
};

export function toProblem(err: unknown): Problem {
  if (err instanceof Problem) return err;
  if (isEngineBusy(err)) return problems.engineBusy('engine');
  if (isEngineUnavailable(err)) return problems.engineUnavailable();
  const fastifyErr = err as Partial<FastifyError>;
  const mapped = typeof fastifyErr.code === 'string' ? FASTIFY_PROBLEMS[fastifyErr.code] : undefined;
  if (mapped) return mapped();
  const status = fastifyErr.statusCode;
  // Other client errors raised by Fastify itself (bad URL encoding, a poisoned JSON body, ...).
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const detail = typeof fastifyErr.message === 'string' && fastifyErr.message !== '' ? fastifyErr.message : 'bad request';
    return status === 413
      ? problems.payloadTooLarge(detail)
      : status === 415
        ? problems.unsupportedMediaType(detail)
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

export function replyWithProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  return sendProblem(reply, problem, instanceOf(request));
}

export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = toProblem(err);
  if (problem.status >= 500 && (problem.code === 'engine_unavailable' || problem.code === 'engine_busy')) {
    request.log.warn({ err }, problem.code === 'engine_busy' ? 'temporal busy' : 'temporal unavailable');
  } else if (problem.status >= 500) {
    request.log.error({ err }, 'request failed');
  }
  return replyWithProblem(request, reply, problem);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return replyWithProblem(request, reply, problems.notFound(request.method, instanceOf(request)));
}
