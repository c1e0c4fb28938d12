// Every schema of the HTTP API, in TypeBox. Fastify validates requests and serialises
// answers with them, and @fastify/swagger builds /openapi.json from the same objects, so
// the document cannot drift from what the server does.
import { Type, type TSchema } from 'typebox';
import { OPERATION_STATUSES } from '../../workflows/contracts.js';
import { Operation, operationSchema } from '../../common/operation-schema.js';
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

/** The schemas that name the operation types, for an API with these types. */
export function resourceSchemas(types: readonly string[]) {
  const operation = operationSchema(types);
  return { Operation: operation, OperationList: operationList(operation), ListQuery: listQuery(types) };
}

function operationList(operation: typeof Operation) {
  return Type.Object({
    operations: Type.Array(operation, {
      description:
        'Newest first. Items are built from the visibility store: result, error and notification are omitted (GET the operation for them).',
    }),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page',
    }),
  });
}

function listQuery(types: readonly string[]) {
  return Type.Object(
    {
      status: Type.Optional(Type.Enum([...OPERATION_STATUSES], { type: 'string' })),
      type: Type.Optional(Type.Enum([...types], { type: 'string' })),
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
    type: Type.String({ description: 'URI naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Enum(Object.keys(PROBLEM_TITLES), { type: 'string', description: 'Stable machine-readable code' }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'invalid_request: one entry per bad field or header',
      }),
    ),
    differences: Type.Optional(
      Type.Array(Type.String(), { description: 'idempotency_key_reused: names of the fields that differ' }),
    ),
  },
  { description: 'RFC 9457 problem details' },
);

// Response helpers: each documents its media type and headers for the OpenAPI document.
type HeaderDocs = Record<string, { type: 'string' | 'integer'; description: string }>;

export function jsonResponse<T extends TSchema>(description: string, schema: T, headers?: HeaderDocs) {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

export function problemResponse(description: string, headers?: HeaderDocs) {
  return { description, ...(headers ? { headers } : {}), content: { [PROBLEM_CONTENT_TYPE]: { schema: Problem } } };
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
      'IETF RateLimit-Policy: the tenant\'s quota of new operations and its window in seconds, e.g. "tenant";q=50;w=1. Sent when the tenant is limited.',
  },
  rateLimit: {
    type: 'string',
    description:
      'IETF RateLimit: what is left of the quota in this window and the seconds until it ends, e.g. "tenant";r=0;t=1. Sent when the tenant is limited.',
  },
} as const;

export const engineUnavailableResponse = problemResponse(
  'engine_unavailable (Temporal did not answer, or cannot serve as it is set up) or engine_busy (Temporal refused the call as overloaded): retry with the same key after Retry-After',
  { 'Retry-After': H.retryAfter },
);
/** A start's 503: either reason started nothing, so a retry with the same key is safe. */
export const startUnavailableResponse = problemResponse(
  'engine_unavailable (Temporal did not answer) or engine_busy (the tenant holds its share of the new operations this instance keeps in flight, or Temporal answered that it is overloaded): nothing was started; retry with the same key after Retry-After',
  { 'Retry-After': H.retryAfter },
);
export const rateLimitedResponse = problemResponse(
  'rate_limited: the tenant spent its quota for this window (new operations: RETRYSAFE_TENANT_LIMITS; reads, lists and cancels: RETRYSAFE_TENANT_READ_LIMITS), or 64 requests already wait on this key at this instance; nothing was started; retry with the same key after Retry-After. A replay this instance answers from its cache is never refused.',
  { 'Retry-After': H.retryAfter, RateLimit: H.rateLimit, 'RateLimit-Policy': H.rateLimitPolicy },
);
export const unauthorizedResponse = problemResponse('unauthorized: missing or unknown API key', {
  'WWW-Authenticate': H.wwwAuthenticate,
});
