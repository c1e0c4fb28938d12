// /v1 routes. Checks run in a fixed order, each in the earliest hook that can run it: the
// API key (401, the auth plugin), then Idempotency-Key and Prefer (400) in onRequest,
// before the body is even read, then the body against its schema (400). Only a request
// that passed all of them reaches the handler, so a rejected request starts nothing and
// consumes no key. The key is composed into its OperationRef once, here, and that ref is
// what the service claims and starts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { OperationDefinition } from '../../../workflows/definition.js';
import { operationRef, type OperationRef } from '../../../workflows/identity.js';
import type { DefinitionCatalog } from '../../../workflows/catalog.js';
import { isValidKey, parseClientKey } from '../idempotency-key.js';
import type { OperationService } from '../engine/service.js';
import { crossFieldErrors, normaliseRequest } from '../requests.js';
import { parsePrefer } from '../prefer.js';
import { problems } from '../problems.js';
import { bindLog } from '../request-log.js';
import {
  StartHeaders,
  asOperation,
  asOperationList,
  cancelResponses,
  listQuery,
  listResponses,
  problemResponse,
  readResponses,
  startResponses,
} from '../schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation a POST names: its tenant, its key and their workflow ID. */
    operation: OperationRef;
    waitMs: number;
    preferenceApplied: string | undefined;
  }
}

export interface OperationRoutesOptions {
  service: OperationService;
  /** The operations started here: one `POST /<plural>` route each. */
  catalog: DefinitionCatalog;
  defaultWaitMs: number;
  /** The methods a path supports (for a 405 from a route that serves only some of its paths). */
  allowedMethods: (path: string) => string[];
}

export const RETRY_AFTER_PROCESSING_SECONDS = 1;

/** `…/cancel` at the end of a path the wildcard route receives: the key is what comes before it. */
const CANCEL_SUFFIX = '/cancel';

function claimHeaders(request: FastifyRequest, reply: FastifyReply, defaultWaitMs: number): void {
  const key = parseClientKey(request.headers['idempotency-key']);
  if (!key.ok) throw problems.idempotencyKey(key);
  request.operation = operationRef(request.tenant, key.key);
  bindLog(request, { key: key.key, workflowId: request.operation.workflowId });
  const prefer = parsePrefer(request.headers.prefer, defaultWaitMs);
  if (!prefer.ok) {
    throw problems.invalidRequest(`the Prefer header is not valid: ${prefer.message}`, [
      { field: 'Prefer', message: prefer.message },
    ]);
  }
  request.waitMs = prefer.value.waitMs;
  request.preferenceApplied = prefer.value.applied;
}

/** Aborts when the client goes away before its answer was written. */
function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

type RoutesApp = Parameters<FastifyPluginAsyncTypebox<OperationRoutesOptions>>[0];

export const operationRoutes: FastifyPluginAsyncTypebox<OperationRoutesOptions> = async (app, opts) => {
  // Set by claimHeaders before the handler runs; the placeholder must not be a shared object.
  app.decorateRequest('operation', null as unknown as OperationRef);
  app.decorateRequest('waitMs', 0);
  app.decorateRequest('preferenceApplied', undefined);
  startRoutes(app, opts);
  readRoutes(app, opts.service);
  cancelRoutes(app, opts);
  listRoute(app, opts);
};

/** The answer to a start: the operation, 202 with where to read it while it runs, 200 once it has ended. */
const startHandler =
  (definition: OperationDefinition, service: OperationService) => async (request: FastifyRequest, reply: FastifyReply) => {
    // The normalised request: exactly the accepted fields, optional ones only when sent.
    const normalised = normaliseRequest(definition, request.body);
    const errors = crossFieldErrors(definition, normalised);
    if (errors.length > 0) {
      throw problems.invalidRequest(
        `the request is not valid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
        errors,
      );
    }
    const { type } = definition;
    const { operation, replayed } = await service.submit(
      request.operation,
      definition,
      normalised,
      request.waitMs,
      callerGone(reply),
    );
    request.startOutcome = { type, status: operation.status, code: operation.error?.code, replayed };
    request.log.info(
      { type, status: operation.status, step: operation.step, replayed },
      replayed ? 'operation replayed' : 'operation started',
    );
    if (request.preferenceApplied) reply.header('preference-applied', request.preferenceApplied);
    if (replayed) reply.header('idempotent-replayed', 'true');
    if (operation.status === 'processing') {
      reply.code(202).header('location', operation.links.self).header('retry-after', String(RETRY_AFTER_PROCESSING_SECONDS));
    } else {
      reply.code(200);
    }
    return operation;
  };

/** `POST /<plural>`: one start route per definition. */
function startRoutes(app: RoutesApp, { service, catalog, defaultWaitMs }: OperationRoutesOptions): void {
  for (const definition of catalog.all) {
    app.post(
      `/${definition.plural}`,
      {
        onRequest: async (request, reply) => claimHeaders(request, reply, defaultWaitMs),
        serializerCompiler: asOperation,
        config: { admission: 'start' },
        schema: {
          summary: `Start (or replay) a ${definition.type}`,
          description: definition.description,
          operationId: `start_${definition.type}`,
          tags: ['operations'],
          headers: StartHeaders,
          body: definition.request,
          response: startResponses(definition.type),
        },
      },
      startHandler(definition, service),
    );
  }
}

const KeyParams = Type.Object({ key: Type.String({ description: 'The Idempotency-Key, URL-encoded' }) });
const PathParams = Type.Object({ '*': Type.String() });

/** `GET /operations/{key}`, and the same with an unencoded "/" in the key. */
function readRoutes(app: RoutesApp, service: OperationService): void {
  const getOperation = async (request: FastifyRequest, reply: FastifyReply, key: string) => {
    // Keys are visible ASCII; anything else cannot name an operation.
    if (!isValidKey(key)) throw problems.operationNotFound();
    const ref = operationRef(request.tenant, key);
    bindLog(request, { key, workflowId: ref.workflowId });
    return service.get(ref);
  };

  app.get(
    '/operations/:key',
    {
      serializerCompiler: asOperation,
      config: { admission: 'read' },
      schema: {
        summary: 'Read an operation by its key',
        description: 'URL-encode the key (a "/" in a key is %2F). Another tenant\'s key is not found.',
        operationId: 'get_operation',
        tags: ['operations'],
        params: KeyParams,
        response: readResponses,
      },
    },
    async (request, reply) => getOperation(request, reply, request.params.key),
  );

  // Keys may hold "/": accept them unencoded too (`/v1/operations/a/b` is key "a/b").
  app.get(
    '/operations/*',
    {
      // It does read a key that ends in "/cancel", but the resource documented at
      // `…/{key}/cancel` is the cancel action, so that is what its Allow header describes
      // (such a key is read unambiguously %2F-encoded).
      config: { servesPath: (path: string) => !path.endsWith(CANCEL_SUFFIX), admission: 'read' },
      serializerCompiler: asOperation,
      schema: { hide: true, params: PathParams, response: readResponses },
    },
    async (request, reply) => getOperation(request, reply, request.params['*']),
  );
}

/** `POST /operations/{key}/cancel`, and the same with an unencoded "/" in the key. */
function cancelRoutes(app: RoutesApp, { service, allowedMethods }: OperationRoutesOptions): void {
  const cancelOperation = async (request: FastifyRequest, reply: FastifyReply, key: string) => {
    if (!isValidKey(key)) throw problems.operationNotFound();
    const ref = operationRef(request.tenant, key);
    bindLog(request, { key, workflowId: ref.workflowId });
    const operation = await service.cancel(ref);
    request.log.info({ status: operation.status, step: operation.step }, 'cancel requested');
    reply.code(202).header('location', operation.links.self).header('retry-after', String(RETRY_AFTER_PROCESSING_SECONDS));
    return operation;
  };

  app.post(
    '/operations/:key/cancel',
    {
      serializerCompiler: asOperation,
      config: { admission: 'read' },
      schema: {
        summary: 'Cancel a running operation',
        description:
          'No body and no Idempotency-Key: the key names the operation, and a repeated cancel is harmless. The step in flight ' +
          'finishes (its outcome known, or fenced at its deadline), no new step starts, the registered compensations run, ' +
          'and the operation ends failed with code cancelled; a POST retry of its key then answers that outcome. ' +
          'URL-encode the key ("/" is %2F).',
        operationId: 'cancel_operation',
        tags: ['operations'],
        params: KeyParams,
        response: cancelResponses,
      },
    },
    async (request, reply) => cancelOperation(request, reply, request.params.key),
  );

  // Keys may hold "/": `/v1/operations/a/b/cancel` cancels key "a/b". Any other POST under
  // /v1/operations/ names a path that is read, not written.
  app.post(
    '/operations/*',
    {
      config: { servesPath: (path: string) => path.endsWith(CANCEL_SUFFIX), admission: 'read' },
      serializerCompiler: asOperation,
      schema: { hide: true, params: PathParams, response: { ...cancelResponses, 405: problemResponse('method_not_allowed') } },
    },
    async (request, reply) => {
      const path = request.params['*'];
      if (!path.endsWith(CANCEL_SUFFIX)) {
        const url = request.url.split('?')[0]!;
        throw problems.methodNotAllowed(request.method, allowedMethods(url));
      }
      return cancelOperation(request, reply, path.slice(0, -CANCEL_SUFFIX.length));
    },
  );
}

/** `GET /operations`: the tenant's operations, a page at a time. */
function listRoute(app: RoutesApp, { service, catalog }: OperationRoutesOptions): void {
  app.get(
    '/operations',
    {
      serializerCompiler: asOperationList,
      config: { admission: 'read' },
      schema: {
        summary: "List the tenant's operations",
        description: 'From the Temporal visibility store (eventually consistent). Page with `cursor`.',
        operationId: 'list_operations',
        tags: ['operations'],
        querystring: listQuery(catalog.types),
        response: listResponses,
      },
    },
    async (request) =>
      service.list(request.tenant, {
        status: request.query.status,
        type: request.query.type,
        version: request.query.version,
        limit: request.query.limit !== undefined ? Number(request.query.limit) : 50,
        cursor: request.query.cursor,
      }),
  );
}
