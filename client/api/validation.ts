// Turns Ajv errors into the `errors: [{field, message}]` of an invalid_request problem:
// one entry per bad field, named the way a client wrote it (`items[0].quantity`).
import type { FastifySchemaValidationError } from 'fastify';
import { CURRENCY_FORMAT } from './schemas.js';
import { ApiProblem, problems, type FieldError } from './problems.js';

function pathToField(instancePath: string): string {
  let field = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    field += /^\d+$/.test(part) ? `[${part}]` : field === '' ? part : `.${part}`;
  }
  return field;
}

const join = (base: string, name: string) => (base === '' ? name : `${base}.${name}`);

function describe(error: FastifySchemaValidationError, dataVar: string): FieldError {
  const base = pathToField(error.instancePath);
  const params = error.params;
  switch (error.keyword) {
    case 'required':
      return { field: join(base, String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: join(base, String(params.additionalProperty)), message: 'is not an allowed field' };
    case 'format':
      if (params.format === CURRENCY_FORMAT) return { field: base, message: 'must be an ISO 4217 currency code' };
      break;
    case 'enum':
      if (base === 'currency') return { field: base, message: 'must be an ISO 4217 currency code' };
      break;
    case 'pattern':
      if (base === 'currency') return { field: base, message: 'must be an ISO 4217 currency code (three capital letters)' };
      if (dataVar === 'querystring' && base === 'limit') return { field: base, message: 'must be an integer from 1 to 100' };
      if (dataVar === 'querystring' && base === 'cursor') return { field: base, message: 'is not a cursor from a previous page' };
      break;
    case 'type':
      if (base === '') return { field: dataVar, message: `must be a JSON ${String(params.type)}` };
      break;
  }
  return { field: base === '' ? dataVar : base, message: error.message ?? 'is not valid' };
}

/**
 * At most this many fields are named. A body of 30 000 bad items within the size limit
 * would otherwise get an answer some megabytes long: an amplifier, not a help.
 */
export const MAX_FIELD_ERRORS = 20;

/** Fastify's schemaErrorFormatter: the problem itself travels as the validation error. */
export function formatValidationErrors(errors: FastifySchemaValidationError[], dataVar: string): ApiProblem {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  let more = false;
  for (const error of errors) {
    const entry = describe(error, dataVar);
    if (seen.has(entry.field)) continue; // one entry per field: the first reason is enough
    if (fields.length === MAX_FIELD_ERRORS) {
      more = true;
      break;
    }
    seen.add(entry.field);
    fields.push(entry);
  }
  const where = dataVar === 'querystring' ? 'query' : dataVar;
  return problems.invalidRequest(
    `the ${where} is not valid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}${more ? '; and more' : ''}`,
    fields,
  );
}
