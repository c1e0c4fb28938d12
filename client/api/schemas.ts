// Every schema of the HTTP API, in TypeBox. Fastify validates requests with them, and
// @fastify/swagger builds /openapi.json from the same objects, so the document cannot
// drift from what the server does. Answers about operations are documented per type (a
// payment's resource, a transfer's) and serialised in the one form that fits them all
// (serialiseAs), both made from the one list of the resource's fields.
import fastJson from 'fast-json-stringify';
import { Type, type TSchema } from 'typebox';
import type { DefinitionCatalog } from '../../workflows/catalog.js';
import { OPERATION_STATUSES } from '../../workflows/contracts.js';
import { Operation, RESOURCE_PARTS, resultFields, typedOperationSchema } from '../../common/resource-schema.js';
import { PROBLEM_CONTENT_TYPE } from '../../common/http/problem.js';
import { MAX_KEY_LENGTH } from './idempotency-key.js';
import { MAX_WAIT_SECONDS } from './prefer.js';
import { PROBLEM_TITLES } from './problems.js';

export const StartHeaders = Type.Object({
  // Documents exactly what the key parser accepts (it runs first and answers
  // idempotency_key_missing / _invalid): bare visible ASCII not starting with a quote, or an
  // sf-string of visible ASCII whose only escapes are \" and \\.
  'idempotency-key': Type.String({
    pattern: `^(?:[\\x21\\x23-\\x7e][\\x21-\\x7e]{0,${MAX_KEY_LENGTH - 1}}|"(?:[\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\]){1,${MAX_KEY_LENGTH}}")$`,
    description:
      `The operation's key, 1-${MAX_KEY_LENGTH} visible ASCII characters, as a structured-field string ("abc") ` +
      'or bare (abc); both name the same key. A retry must send the same key and the same body.',
    examples: ['"order-42"'],
  }),
  prefer: Type.Optional(
    Type.String({
      description: `RFC 7240: wait=N (0-${MAX_WAIT_SECONDS} s) bounds how long the answer waits for the outcome; respond-async alone means wait=0.`,
      examples: ['wait=10', 'respond-async'],
    }),
  ),
});

export { Operation };

const pascal = (type: string) => type.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

/** The name the document gives the resource of one operation type: `PaymentOperation`. */
export const operationSchemaName = (type: string) => `${pascal(type)}Operation`;

/** A schema the document names (components/schemas), referred to by that name. */
const ref = (name: string) => Type.Ref(name);

/**
 * The schemas /openapi.json names, added to the app as shared schemas: each type's
 * resource (its own `type` and `result` fields), `Operation` (any of them, told apart by
 * `type`), the list, the resource's nested parts and the problem document. Generated
 * clients get one class or type for each.
 */
export function documentSchemas(catalog: DefinitionCatalog): TSchema[] {
  const parts = {
    OperationStep: ref('OperationStep'),
    OperationError: ref('OperationError'),
    OperationNotification: ref('OperationNotification'),
    OperationLinks: ref('OperationLinks'),
  } satisfies Record<keyof typeof RESOURCE_PARTS, TSchema>;
  const names = new Map<string, string>();
  for (const type of catalog.types) {
    const other = names.get(operationSchemaName(type));
    if (other) throw new Error(`operation types ${other} and ${type} would share the schema name ${operationSchemaName(type)}`);
    names.set(operationSchemaName(type), type);
  }
  const typed = catalog.all.map((definition) =>
    typedOperationSchema(definition.type, resultFields(definition), parts, {
      $id: operationSchemaName(definition.type),
      description: `The operation resource of a ${definition.type}: ${definition.description}`,
    }),
  );
  const mapping = Object.fromEntries(catalog.types.map((type) => [type, `#/components/schemas/${operationSchemaName(type)}`]));
  return [
    ...Object.entries(RESOURCE_PARTS).map(([name, schema]) => ({ ...schema, $id: name })),
    ...typed,
    {
      $id: 'Operation',
      description: 'The operation resource of any type: `type` says which.',
      oneOf: catalog.types.map((type) => ref(operationSchemaName(type))),
      discriminator: { propertyName: 'type', mapping },
    },
    Type.Object(
      {
        operations: Type.Array(ref('Operation'), { description: LIST_ITEMS }),
        nextCursor: NextCursor,
      },
      { $id: 'OperationList' },
    ),
    Problem,
  ];
}

const LIST_ITEMS =
  'Newest first. Items are built from the visibility store: result, error and notification are omitted (GET the operation for them).';
const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as `cursor` for the next page; null on the last page',
});

/** The list as the API serialises it: resources of any type. */
export const OperationList = Type.Object({
  operations: Type.Array(Operation, { description: LIST_ITEMS }),
  nextCursor: NextCursor,
});

/**
 * How the resource routes serialise their answers. The document gives each route the
 * resource of its own type (a payment's answer has `result.chargeId`); the wire form is
 * the resource of any type with any result field, so that nothing an operation carries
 * is dropped or refused: one that started on an earlier definition may have result fields
 * the current one does not, and one the catalog no longer has still reads. Only 2xx
 * answers are objects; problems are sent as text (sendProblem).
 */
export function serialiseAs(schema: TSchema) {
  const serialise = fastJson(schema);
  return ({ httpStatus }: { httpStatus?: string }) =>
    httpStatus?.startsWith('2') ? serialise : (payload: unknown) => JSON.stringify(payload);
}
export const asOperation = serialiseAs(Operation);
export const asOperationList = serialiseAs(OperationList);

/** The list's query string, with the operation types this API knows. */
export function listQuery(types: readonly string[]) {
  return Type.Object(
    {
      status: Type.Optional(Type.Enum([...OPERATION_STATUSES], { type: 'string' })),
      type: Type.Optional(Type.Enum([...types], { type: 'string' })),
      version: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{16}$',
          description: 'Only operations started on this definition version (`definition.version` of the resource)',
          examples: ['3f9c2a1b7d4e6f80'],
        }),
      ),
      limit: Type.Optional(
        Type.String({
          pattern: '^(100|[1-9][0-9]?)$',
          description: 'Page size, an integer from 1 to 100 (default 50)',
          examples: ['50'],
        }),
      ),
      // What a cursor is: base64url (no padding) of an 8-byte tag and the engine's page token of
      // at least one byte, so 12 characters at the least. The tag binds it to the tenant and
      // filters it was issued for; any other string of this shape is refused (400).
      cursor: Type.Optional(
        Type.String({
          pattern: '^[A-Za-z0-9_-]+$',
          minLength: 12,
          maxLength: 8192,
          description:
            'nextCursor of the previous page of the same query, unchanged: base64url, issued for one tenant and one set of filters',
        }),
      ),
    },
    { additionalProperties: false },
  );
}

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI naming the problem type: urn:retrysafe:problem:<code>' }),
    title: Type.String({ description: 'A short summary of the code; for people, like detail: branch on code' }),
    status: Type.Integer({ description: 'The HTTP status of the answer' }),
    detail: Type.String({ description: 'What happened to this request, in words' }),
    code: Type.Enum(Object.keys(PROBLEM_TITLES), { type: 'string', description: 'Stable machine-readable code' }),
    instance: Type.Optional(Type.String({ description: 'The path of the request' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'invalid_request: one entry per bad field or header',
      }),
    ),
    differences: Type.Optional(
      Type.Array(Type.String(), { description: 'idempotency_key_reused: names of the fields that differ' }),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' },
);

// Response helpers: each documents its media type and headers for the OpenAPI document.
type HeaderDocs = Record<string, { type: 'string' | 'integer'; description: string }>;

export function jsonResponse<T extends TSchema>(description: string, schema: T, headers?: HeaderDocs) {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

export function problemResponse(description: string, headers?: HeaderDocs) {
  return { description, ...(headers ? { headers } : {}), content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } } };
}

export const H = {
  location: { type: 'string', description: 'Where to poll the operation: /v1/operations/{key}' },
  retryAfter: { type: 'integer', description: 'Seconds to wait before asking again' },
  replayed: {
    type: 'string',
    description: '"true" when this request did not start the operation (a retry or a concurrent duplicate)',
  },
  preferenceApplied: { type: 'string', description: 'The Prefer preferences honoured (RFC 7240)' },
  wwwAuthenticate: { type: 'string', description: 'Bearer' },
  rateLimitPolicy: {
    type: 'string',
    description:
      'IETF RateLimit-Policy: the tenant\'s quota and its window in seconds, e.g. "tenant";q=50;w=1. Sent when the tenant is limited.',
  },
  rateLimit: {
    type: 'string',
    description:
      'IETF RateLimit: what is left of the quota in this window and the seconds until it ends, e.g. "tenant";r=0;t=1. Sent when the tenant is limited.',
  },
} as const;

const retryAfter = { 'Retry-After': H.retryAfter };
const rateLimitHeaders = { RateLimit: H.rateLimit, 'RateLimit-Policy': H.rateLimitPolicy };

// What a request may be answered whatever its route: the HTTP parser's refusals (written
// before any route runs, but answers to a request for this path all the same), a failure,
// and an instance that is closing. A route's own answers of the same status say both.
const MALFORMED = 'invalid_request: the request is not valid HTTP/1.1 (a control character in a header, ...)';
const SHUTTING_DOWN = 'shutting_down: this instance is closing and did nothing; retry after Retry-After';
const anyRequest = {
  408: problemResponse('request_timeout: the request line, headers or body did not arrive in time'),
  431: problemResponse('headers_too_large: the request headers exceed 16 KiB'),
  500: problemResponse('internal_error: the server failed; the cause is in its log'),
};

/** The answers of an open route (liveness, readiness): `ok`, and `unavailable` describes its own 503. */
export function openRouteResponses<T>(ok: T, own: { unavailable?: string } = {}) {
  return {
    200: ok,
    400: problemResponse(MALFORMED),
    ...anyRequest,
    503: problemResponse(own.unavailable ? `${own.unavailable}; or ${SHUTTING_DOWN}` : SHUTTING_DOWN, retryAfter),
  };
}

/**
 * The answers of a route behind the API key besides its own: 401, and 429 (every
 * authenticated route is bounded per tenant). `invalid` and `unavailable` describe the
 * route's own 400 and 503, when it has them.
 */
export function authenticatedResponses(own: { invalid?: string; unavailable?: string; rateLimited?: string }) {
  return {
    400: problemResponse(own.invalid ? `${own.invalid}; or ${MALFORMED}` : MALFORMED),
    401: problemResponse('unauthorized: missing or unknown API key', { 'WWW-Authenticate': H.wwwAuthenticate }),
    ...anyRequest,
    429: problemResponse(
      own.rateLimited ??
        'rate_limited: the tenant spent its quota for this window (reads, lists and cancels: RETRYSAFE_TENANT_READ_LIMITS), or 64 requests already wait on this key at this instance; retry after Retry-After',
      { ...retryAfter, ...rateLimitHeaders },
    ),
    503: problemResponse(own.unavailable ? `${own.unavailable}; or ${SHUTTING_DOWN}` : SHUTTING_DOWN, retryAfter),
  };
}

const ENGINE_UNAVAILABLE =
  'engine_unavailable (Temporal did not answer, or cannot serve as it is set up) or engine_busy (Temporal refused the call as overloaded): retry after Retry-After';

/** The answers of `POST /v1/<plural>`, with its type's own resource. */
export function startResponses(type: string) {
  const resource = ref(operationSchemaName(type));
  const answered = {
    'Idempotent-Replayed': H.replayed,
    'Preference-Applied': H.preferenceApplied,
    ...rateLimitHeaders,
  };
  return {
    200: jsonResponse('The operation finished (succeeded, or failed with a business error)', resource, answered),
    202: jsonResponse('Still running when the wait ended: poll Location', resource, {
      Location: H.location,
      ...retryAfter,
      ...answered,
    }),
    ...authenticatedResponses({
      invalid: 'idempotency_key_missing / idempotency_key_invalid, or invalid_request (body, JSON or Prefer) with `errors`',
      unavailable:
        'engine_unavailable (Temporal did not answer) or engine_busy (the tenant holds its share of the new operations this instance keeps in flight, or Temporal answered that it is overloaded): nothing was started; retry with the same key after Retry-After',
      rateLimited:
        'rate_limited: the tenant spent its quota of new operations for this window (RETRYSAFE_TENANT_LIMITS), or 64 requests already wait on this key at this instance; nothing was started; retry with the same key after Retry-After. A replay this instance answers from its cache is never refused.',
    }),
    413: problemResponse('payload_too_large'),
    415: problemResponse('unsupported_media_type: the body must be application/json'),
    422: problemResponse(
      'idempotency_key_reused: the key names an operation with a different request; `differences` lists the fields',
    ),
  };
}

/** The answers of `GET /v1/operations/{key}`. */
export const readResponses = {
  200: jsonResponse('The operation, in any status', ref('Operation')),
  ...authenticatedResponses({
    invalid: 'invalid_request: the path is not valid percent-encoding',
    unavailable: ENGINE_UNAVAILABLE,
  }),
  404: problemResponse('operation_not_found: no operation with this key for this tenant'),
};

/** The answers of `POST /v1/operations/{key}/cancel`. */
export const cancelResponses = {
  202: jsonResponse(
    'Cancel requested (or already requested): the operation stops at its next step boundary, compensates, and ends failed with code cancelled; poll Location',
    ref('Operation'),
    { Location: H.location, ...retryAfter },
  ),
  ...authenticatedResponses({
    invalid: 'invalid_request: the path is not valid percent-encoding, or a body was sent that is not JSON',
    unavailable: ENGINE_UNAVAILABLE,
  }),
  404: problemResponse('operation_not_found: no operation with this key for this tenant'),
  409: problemResponse('operation_already_completed: the operation already succeeded or failed; it is not changed'),
  // The route takes no body; one that is sent is still read, and refused like any body.
  413: problemResponse('payload_too_large: a body was sent, larger than the limit'),
  415: problemResponse('unsupported_media_type: a body was sent that is not application/json'),
};

/** The answers of `GET /v1/operations`. */
export const listResponses = {
  200: jsonResponse('One page of operations', ref('OperationList')),
  ...authenticatedResponses({
    invalid: 'invalid_request: a bad status, type, limit or cursor',
    unavailable: ENGINE_UNAVAILABLE,
  }),
};
