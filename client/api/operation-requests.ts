// What the API makes of a request for an operation, from its definition alone: the
// normalised request (exactly the fields its schema declares, nothing coerced), the rules
// across fields a schema cannot say, the part of it the key is bound to, and the Web UI's
// one-line summary and details.
import type { TSchema } from 'typebox';
import type { OperationDefinition } from '../../workflows/definition.js';
import type { FieldError } from '../../common/http/problem.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A validated body reduced to what its schema declares, in the schema's order: an object
 * keeps its declared properties that are present, an array its normalised items. (The schema
 * refuses unknown fields already; this makes the stored request independent of the body's
 * key order and of anything a future schema might let through.)
 */
export function normalise(schema: TSchema, value: unknown): unknown {
  const s = schema as { type?: unknown; properties?: Record<string, TSchema>; items?: TSchema };
  if (s.type === 'object' && s.properties && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(s.properties)) {
      if (value[name] !== undefined) out[name] = normalise(property, value[name]);
    }
    return out;
  }
  if (s.type === 'array' && s.items && Array.isArray(value)) return value.map((item) => normalise(s.items!, item));
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

/** `checkout acme/order-42 · EUR 42.00`: the Web UI's line about an operation, fixed at start. */
export function staticSummary(definition: OperationDefinition, workflowId: string, request: Record<string, unknown>): string {
  const summary = definition.summary?.(request as never);
  return `${definition.type} ${workflowId}${summary ? ` · ${summary}` : ''}`;
}

/** The Web UI's details of the request (markdown), fixed at start, with the version of the definition it runs. */
export function staticDetails(definition: OperationDefinition, request: Record<string, unknown>, version: string): string {
  const lines =
    definition.details?.(request as never) ??
    Object.entries(request).map(([field, value]) => `${field} \`${typeof value === 'string' ? value : JSON.stringify(value)}\``);
  return [...lines, `definition \`${version}\``].join('\n\n');
}
