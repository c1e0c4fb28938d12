// The OpenAPI document, generated from the same TypeBox schemas that validate requests and
// describe answers, so it cannot drift from what the server does; and its Swagger UI. It
// is written for generated clients (openapi-python-client, openapi-typescript,
// openapi-generator): every route has an operationId, each type's answers are its own
// resource, the resources and the problem document are named schemas, and the document
// says where the API is and how to authenticate.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { DefinitionCatalog } from '../../../workflows/catalog.js';
import type { ApiInstance } from '../instance.js';
import { authenticatedResponses, documentSchemas, jsonResponse } from '../schemas.js';

export interface OpenApiOptions {
  /** The operations this API starts: a route and a resource schema each. */
  catalog: DefinitionCatalog;
  /** No API keys configured: every request is the one dev tenant, with or without a key. */
  devMode: boolean;
}

type Document = Record<string, unknown>;

/** A Host header that can be the authority of a URL: a name or IPv4 address, or an IPv6 literal, and a port. */
const AUTHORITY = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/**
 * The API's base URL, as the request for the document reached it. Not the configured
 * host and port: behind a load balancer or in a container those are not an address a
 * client can use, while the Host the client sent is (the scheme is the listener's own:
 * this process serves plain HTTP). A Host that cannot be a URL's authority gives the
 * relative `/`, which generators resolve against where they read the document.
 */
function serverOf(request: FastifyRequest): { url: string; description: string } {
  const host = request.host;
  if (!host || !AUTHORITY.test(host)) return { url: '/', description: 'This API, where this document was read' };
  return { url: `${request.protocol}://${host}`, description: 'This API, as the request for this document reached it' };
}

function withServer(document: Document, request: FastifyRequest): Document {
  return { ...document, servers: [serverOf(request)] };
}

export function installOpenApi(app: ApiInstance, opts: OpenApiOptions): void {
  for (const schema of documentSchemas(opts.catalog)) app.addSchema(schema);
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'retrysafe',
        version: '1.0.0',
        description:
          'Safe retries for payments and checkouts. Every POST needs an Idempotency-Key; a retry with the same key ' +
          'and body returns the same operation, and a retry after a 503 is always safe.' +
          (opts.devMode ? ' This API runs in dev mode: every request is tenant "default", with or without an API key.' : ''),
        license: { name: 'MIT', identifier: 'MIT' },
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      // Every route needs the bearer key but the probes, which say `security: []`. In dev
      // mode the key is optional (`{}`, no requirement, is the other choice): a client
      // generated then works without one, and one that sends a key keeps working once
      // keys are configured.
      security: opts.devMode ? [{ bearerAuth: [] }, {}] : [{ bearerAuth: [] }],
      tags: [
        { name: 'operations', description: 'Payments, checkouts and their outcomes' },
        { name: 'system', description: 'Health, readiness, metrics and this document' },
      ],
    },
    // The schemas added above keep their names in components/schemas (not def-0, def-1, ...).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    transformSpecification: (document, request) => withServer(document as Document, request),
  });
  // In a plugin of its own, registered after swagger's: its route is then in the document too.
  void app.register(async (scope) => serveDocument(scope));
}

function serveDocument(app: FastifyInstance): void {
  app.get(
    '/openapi.json',
    {
      schema: {
        summary: 'This OpenAPI document',
        description: '`servers` names this API as the request reached it.',
        operationId: 'get_openapi',
        tags: ['system'],
        response: {
          200: jsonResponse('The OpenAPI 3.1 document', Type.Object({}, { additionalProperties: true })),
          ...authenticatedResponses({}),
        },
      },
    },
    async (request, reply) =>
      // Sent as text: the document is served as it was built, not through a response schema.
      reply.type('application/json; charset=utf-8').send(JSON.stringify(withServer(app.swagger() as Document, request))),
  );
}
