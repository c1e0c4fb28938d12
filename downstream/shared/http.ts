// The HTTP edge shared by the sandbox services: TypeBox validation without coercion, a
// JSON parser that tolerates an empty body, and one error handler that answers every
// failure with a problem document. Stack traces and 5xx details only ever reach the log.
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchemaValidationError,
  FastifyServerOptions,
  RawServerDefault,
} from 'fastify';
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { describeInvalidRequest, type FieldStyle } from '../../common/http/field-errors.js';
import { Problem, sendProblem } from '../../common/http/problem.js';
import { RequestEventLog } from '../../common/http/request-log.js';
import { IDENTIFIER_PATTERN, IDENTIFIER_RULE } from '../../workflows/identity.js';

/** Sandbox request bodies are small; anything larger is refused with 413. */
export const BODY_LIMIT = 64 * 1024;

/** A sandbox service's Fastify instance: the Node HTTP server, schemas in TypeBox. */
export type SandboxApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** Fields named by their JSON path (`items.0.quantity`), prefixed outside the body (`params.sku`). */
export const SANDBOX_FIELD_STYLE: FieldStyle = {
  name(path, part) {
    if (path.length === 0) return part;
    return part === 'body' ? path.join('.') : `${part}.${path.join('.')}`;
  },
  describe: ({ keyword, params }) =>
    keyword === 'pattern' && params.pattern === IDENTIFIER_PATTERN ? IDENTIFIER_RULE : undefined,
};

function invalidRequest(errors: FastifySchemaValidationError[], part: string): Problem {
  const { detail, errors: fields } = describeInvalidRequest(errors, part, SANDBOX_FIELD_STYLE);
  return new Problem(400, 'invalid_request', detail, { extensions: { errors: fields } });
}

/**
 * Fastify options every sandbox service starts with. Derived keys are up to 512 characters
 * and travel in the path, so the router must accept long parameters.
 */
export function baseServerOptions(): FastifyServerOptions {
  return {
    bodyLimit: BODY_LIMIT,
    // Our own onRequest hook answers requests that arrive while closing, as a problem.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 4096 },
    logController: new RequestEventLog(),
    // The problem itself travels as the validation error.
    schemaErrorFormatter: invalidRequest,
    frameworkErrors: (error, request, reply) => {
      // Bad percent-encoding in the URL and the like, reached before routing.
      void handleError(error as FastifyError, request, reply);
    },
  };
}

export const shuttingDown = () =>
  new Problem(503, 'shutting_down', 'the service is shutting down; nothing was done', { headers: { 'retry-after': '1' } });

export function installHttpEdge(app: SandboxApp): void {
  // Bodies are validated as sent: "1250" is not an amount (Ajv's default would coerce it).
  app.setValidatorCompiler(TypeBoxValidatorCompiler);

  // An empty JSON body means "no body", so `POST …/reverse` with `Content-Type:
  // application/json` and nothing else is accepted; routes that need a body still refuse
  // `undefined` through their schema.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    defaultJson(request, text, done);
  });

  // Requests that arrive on a kept-alive connection while the service closes: refuse them
  // before they start anything, and tell the client to come back.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw shuttingDown();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => handleError(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new Problem(404, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}

const invalidJson = () =>
  new Problem(400, 'invalid_request', 'the request body is not valid JSON', {
    extensions: { errors: [{ field: 'body', message: 'is not valid JSON' }] },
  });

/** Fastify's own refusals and storage contention, as the sandbox's problems. */
function problemOf(error: FastifyError): Problem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem(413, 'payload_too_large', 'the request body is larger than 64 KiB');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidJson();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new Problem(415, 'unsupported_media_type', 'send the request body as application/json');
    case 'FST_ERR_BAD_URL':
      return new Problem(400, 'invalid_request', 'the URL is not validly percent-encoded');
    case 'SQLITE_BUSY':
      // Another process holds the write lock past busy_timeout; nothing was done.
      return new Problem(503, 'storage_busy', 'the ledger is busy; retry shortly', { headers: { 'retry-after': '1' } });
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = (STATUS_CODES[status] ?? 'client error').toLowerCase().replace(/[^a-z0-9]+/g, '_');
    return new Problem(status, code, error.message);
  }
  return undefined;
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof Problem) {
    if (error.status >= 500) request.log.warn({ code: error.code }, error.detail);
    return sendProblem(reply, error);
  }
  const problem = problemOf(error);
  if (problem) return sendProblem(reply, problem);
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, new Problem(500, 'internal_error', 'internal error; the details are in the service log'));
}
