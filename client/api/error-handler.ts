// The one place where the API's errors become answers. A Problem is sent as it is; a failed
// engine call answers what the engine's answer means (engine-errors.ts): a 503 the client
// may retry, or a 4xx for a request the engine refuses; Fastify's own refusals map to their
// problem; anything else is a 500. Causes go to the log and never into the body.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, sendProblem } from '../../common/http/problem.js';
import { engineFailure, type EngineAnswer, type EngineFailure } from './engine-errors.js';
import { problems } from './problems.js';

const ENGINE_PROBLEMS: Record<EngineAnswer, (failure: EngineFailure) => Problem> = {
  unavailable: () => problems.engineUnavailable(),
  busy: () => problems.engineBusy('engine'),
  refused: (failure) =>
    problems.invalidRequest(
      'the workflow engine refused the request as invalid; the same request would be refused again',
      failure.field ? [failure.field] : [],
    ),
  too_large: () => problems.payloadTooLarge('the request is larger than the workflow engine accepts'),
};

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
  const engine = engineFailure(err);
  if (engine) return ENGINE_PROBLEMS[engine.answer](engine);
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
  const engine = err instanceof Problem ? undefined : engineFailure(err);
  if (engine) {
    // Machines read `engine` (the meaning) and `cause`; an operator must act on an error.
    const fields = { err, engine: engine.answer, cause: engine.cause };
    if (engine.needsOperator) request.log.error(fields, 'temporal cannot serve the request as it is set up');
    else if (engine.answer === 'unavailable' || engine.answer === 'busy') request.log.warn(fields, `temporal ${engine.answer}`);
    else request.log.warn(fields, 'temporal refused the request');
  } else if (problem.status >= 500) {
    request.log.error({ err }, 'request failed');
  }
  return replyWithProblem(request, reply, problem);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return replyWithProblem(request, reply, problems.notFound(request.method, instanceOf(request)));
}
