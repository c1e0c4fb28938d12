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
import { problemBody, ProblemError, sendProblem, type FieldError } from './problem.js';

/** Sandbox request bodies are small; anything larger is refused with 413. */
export const BODY_LIMIT = 64 * 1024;

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
    frameworkErrors: (error, request, reply) => {
      // Bad percent-encoding in the URL and the like, reached before routing.
      void handleError(error as FastifyError, request, reply);
    },
  };
}

/** A sandbox service's Fastify instance: the Node HTTP server, schemas in TypeBox. */
export type SandboxApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

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
    throw new ProblemError(503, 'shutting_down', 'the service is shutting down; nothing was done', {}, { 'retry-after': '1' });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => handleError(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problemBody(404, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ProblemError) {
    if (error.status >= 500) request.log.warn({ code: error.code }, error.detail);
    return sendProblem(reply, error.body, error.headers);
  }
  if (error.validation) {
    const errors = fieldErrors(error.validation, error.validationContext);
    return sendProblem(
      reply,
      problemBody(400, 'invalid_request', `the request is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, {
        errors,
      }),
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return sendProblem(reply, problemBody(413, 'payload_too_large', 'the request body is larger than 64 KiB'));
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return sendProblem(
        reply,
        problemBody(400, 'invalid_request', 'the request body is not valid JSON', {
          errors: [{ field: 'body', message: 'is not valid JSON' }],
        }),
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return sendProblem(
        reply,
        problemBody(415, 'unsupported_media_type', 'send the request body as application/json'),
      );
    case 'FST_ERR_BAD_URL':
      return sendProblem(reply, problemBody(400, 'invalid_request', 'the URL is not validly percent-encoded'));
    case 'SQLITE_BUSY':
      // Another process holds the write lock past busy_timeout; nothing was done.
      return sendProblem(reply, problemBody(503, 'storage_busy', 'the ledger is busy; retry shortly'), { 'retry-after': '1' });
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = (STATUS_CODES[status] ?? 'client error').toLowerCase().replace(/[^a-z0-9]+/g, '_');
    return sendProblem(reply, problemBody(status, code, error.message));
  }
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, problemBody(500, 'internal_error', 'internal error; the details are in the service log'));
}

/** Fastify's validation errors (TypeBox flavour) as `{field, message}`, one per problem. */
export function fieldErrors(validation: FastifySchemaValidationError[], context?: string): FieldError[] {
  const prefix = context && context !== 'body' ? `${context}.` : '';
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const push = (field: string, message: string) => {
    const id = `${field}\u0000${message}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push({ field, message });
    }
  };
  for (const issue of validation) {
    const base = pointerToField(issue.instancePath);
    const params = issue.params as Record<string, unknown>;
    if (issue.keyword === 'required' && Array.isArray(params.requiredProperties)) {
      for (const name of params.requiredProperties) push(prefix + joinField(base, String(name)), 'is required');
    } else if (issue.keyword === 'additionalProperties' && Array.isArray(params.additionalProperties)) {
      for (const name of params.additionalProperties) push(prefix + joinField(base, String(name)), 'is not an allowed field');
    } else if (issue.keyword === 'boolean' && issue.schemaPath.endsWith('/additionalProperties')) {
      // TypeBox also reports each extra property against `additionalProperties: false`;
      // the `additionalProperties` entry above already names it.
      continue;
    } else {
      push(prefix + (base === '' ? (context ?? 'body') : base), issue.message ?? 'is invalid');
    }
  }
  return out;
}

function pointerToField(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function joinField(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}
