// What the API makes of a request for an operation, from its definition alone: the
// normalised request (exactly the fields its schema declares, nothing coerced, text in
// Unicode NFC), the rules across fields a schema cannot say, the part of it the key is bound
// to, and the Web UI's one-line summary and details, where tenant text is escaped.
import type { TSchema } from 'typebox';
import type { OperationDefinition } from '../../workflows/definition.js';
import { IDENTIFIER_PATTERN } from '../../workflows/identity.js';
import { markdownCode, markdownText } from '../../workflows/markdown.js';
import type { FieldError } from '../../common/http/problem.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type SchemaShape = { type?: unknown; properties?: Record<string, TSchema>; items?: TSchema; pattern?: unknown };

/**
 * A validated body reduced to what its schema declares, in the schema's order: an object
 * keeps its declared properties that are present, an array its normalised items, a string
 * its Unicode NFC form (so `é` typed as one code point or as `e` and an accent is one request,
 * one fingerprint). (The schema refuses unknown fields already; this makes the stored request
 * independent of the body's key order and of anything a future schema might let through.)
 */
export function normalise(schema: TSchema, value: unknown): unknown {
  const s = schema as SchemaShape;
  if (s.type === 'object' && s.properties && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(s.properties)) {
      if (value[name] !== undefined) out[name] = normalise(property, value[name]);
    }
    return out;
  }
  if (s.type === 'array' && s.items && Array.isArray(value)) return value.map((item) => normalise(s.items!, item));
  if (typeof value === 'string') return value.normalize('NFC');
  return value;
}

/**
 * The request as a definition's summary and details see it: every string escaped for
 * markdown (markdownText), except identifiers (IDENTIFIER_PATTERN), which hold nothing that
 * can leave the code span a definition puts them in, and are shown there as they are.
 */
function forMarkdown(schema: TSchema, value: unknown): unknown {
  const s = schema as SchemaShape;
  if (s.type === 'object' && s.properties && isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, v]) => [name, s.properties![name] ? forMarkdown(s.properties![name]!, v) : v]),
    );
  }
  if (s.type === 'array' && s.items && Array.isArray(value)) return value.map((item) => forMarkdown(s.items!, item));
  if (typeof value === 'string' && s.pattern !== IDENTIFIER_PATTERN) return markdownText(value);
  return value;
}

export function normaliseRequest(definition: OperationDefinition, body: unknown): Record<string, unknown> {
  return normalise(definition.request, body) as Record<string, unknown>;
}

/** Violations of the definition's rules across fields, as the `errors` of a 400. */
export function crossFieldErrors(definition: OperationDefinition, request: Record<string, unknown>): FieldError[] {
  return definition.check?.(request as never) ?? [];
}

/** The fields the idempotency key is bound to: all of them unless the definition names some. */
export function boundRequest(
  definition: OperationDefinition | undefined,
  request: Record<string, unknown>,
): Record<string, unknown> {
  if (!definition?.fingerprint) return request;
  return Object.fromEntries(definition.fingerprint.filter((f) => f in request).map((f) => [f, request[f]]));
}

/**
 * ``checkout `acme/order-42` · EUR 42.00``: the Web UI's line about an operation (markdown),
 * fixed at start. The workflow ID holds the tenant's key, any visible ASCII: a code span of
 * its own keeps it from becoming markup.
 */
export function staticSummary(definition: OperationDefinition, workflowId: string, request: Record<string, unknown>): string {
  const summary = definition.summary?.(forMarkdown(definition.request, request) as never);
  return `${definition.type} ${markdownCode(workflowId)}${summary ? ` · ${summary}` : ''}`;
}

/**
 * The Web UI's details of the request (markdown), fixed at start: the definition's lines,
 * made from the request with its text escaped, or each field's value in a code span; and
 * the version of the definition it runs.
 */
export function staticDetails(definition: OperationDefinition, request: Record<string, unknown>, version: string): string {
  const lines =
    definition.details?.(forMarkdown(definition.request, request) as never) ??
    Object.entries(request).map(
      ([field, value]) => `${markdownText(field)} ${markdownCode(typeof value === 'string' ? value : JSON.stringify(value))}`,
    );
  return [...lines, `definition ${markdownCode(version)}`].join('\n\n');
}
