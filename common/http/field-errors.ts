// Schema validation errors as the `errors: [{field, message}]` of an invalid_request
// problem, for both validators in use: Ajv (the API) and TypeBox's compiler (the
// sandboxes). They report a missing or an unexpected property differently (one property
// per error vs. a list, and TypeBox a second time as a `boolean` schema); both are read
// here into one issue per property. How a field is named and worded is each service's own.
import type { FastifySchemaValidationError } from 'fastify';
import type { FieldError } from './problem.js';

/**
 * At most this many fields are named. A body of 30 000 bad items within the size limit
 * would otherwise get an answer some megabytes long: an amplifier, not a help.
 */
export const MAX_FIELD_ERRORS = 20;

export interface ValidationIssue {
  /** Where the bad value is, as property names and array indexes; a missing or unexpected property included. */
  path: string[];
  keyword: string;
  params: Record<string, unknown>;
  /** The validator's own wording, or ours for a missing or an unexpected property. */
  message: string | undefined;
}

export interface FieldStyle {
  /** The field at `path`; `part` (body, querystring, params, headers) is at fault as a whole when `path` is empty. */
  name(path: readonly string[], part: string): string;
  /** A service's own wording of an issue; undefined keeps the validator's. */
  describe?(issue: ValidationIssue, part: string): string | undefined;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Property names an error is about: Ajv names one, TypeBox lists them. */
function propertyNames(one: unknown, many: unknown): string[] {
  if (Array.isArray(many)) return many.map(String);
  return one === undefined ? [] : [String(one)];
}

export function validationIssues(errors: readonly FastifySchemaValidationError[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    const path = pointerSegments(error.instancePath);
    const params = (error.params ?? {}) as Record<string, unknown>;
    const perProperty = (names: string[], message: string) => {
      if (names.length === 0) issues.push({ path, keyword: error.keyword, params, message });
      for (const name of names) issues.push({ path: [...path, name], keyword: error.keyword, params, message });
    };
    if (error.keyword === 'required') {
      perProperty(propertyNames(params.missingProperty, params.requiredProperties), 'is required');
    } else if (error.keyword === 'additionalProperties') {
      perProperty(propertyNames(params.additionalProperty, params.additionalProperties), 'is not an allowed field');
    } else if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) {
      // TypeBox's second report of an unexpected property, already named above.
      continue;
    } else {
      issues.push({ path, keyword: error.keyword, params, message: error.message });
    }
  }
  return issues;
}

export interface InvalidRequest {
  detail: string;
  errors: FieldError[];
}

/**
 * One entry per bad field (the first reason is enough), at most MAX_FIELD_ERRORS of them,
 * and a detail that repeats them for a person reading the answer.
 */
export function describeInvalidRequest(
  errors: readonly FastifySchemaValidationError[],
  part: string,
  style: FieldStyle,
): InvalidRequest {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  let more = false;
  for (const issue of validationIssues(errors)) {
    const field = style.name(issue.path, part);
    if (seen.has(field)) continue;
    if (fields.length === MAX_FIELD_ERRORS) {
      more = true;
      break;
    }
    seen.add(field);
    fields.push({ field, message: style.describe?.(issue, part) ?? issue.message ?? 'is not valid' });
  }
  const where = part === 'querystring' ? 'query' : part;
  return {
    detail: `the ${where} is not valid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}${more ? '; and more' : ''}`,
    errors: fields,
  };
}
