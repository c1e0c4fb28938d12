// The API's wording of schema errors: fields named the way a client wrote them
// (`items[0].quantity`), and messages that say what a value must be.
import type { FastifySchemaValidationError } from 'fastify';
import { describeInvalidRequest, type FieldStyle } from '../../common/http/field-errors.js';
import type { Problem } from '../../common/http/problem.js';
import { problems } from './problems.js';
import {
  CURRENCY_FORMAT,
  FREE_TEXT_PATTERN,
  FREE_TEXT_RULE,
  IDENTIFIER_PATTERN,
  IDENTIFIER_RULE,
} from '../../workflows/fields.js';

const CURRENCY = 'must be an ISO 4217 currency code';

export const API_FIELD_STYLE: FieldStyle = {
  name(path, part) {
    let field = '';
    for (const segment of path) field += /^\d+$/.test(segment) ? `[${segment}]` : field === '' ? segment : `.${segment}`;
    return field === '' ? part : field;
  },
  describe({ path, keyword, params }, part) {
    const field = path.join('.');
    switch (keyword) {
      case 'format':
        return params.format === CURRENCY_FORMAT ? CURRENCY : undefined;
      case 'enum':
        return field === 'currency' ? CURRENCY : undefined;
      case 'pattern':
        if (params.pattern === IDENTIFIER_PATTERN) return IDENTIFIER_RULE;
        if (params.pattern === FREE_TEXT_PATTERN) return FREE_TEXT_RULE;
        if (field === 'currency') return `${CURRENCY} (three capital letters)`;
        if (part === 'querystring' && field === 'limit') return 'must be an integer from 1 to 100';
        if (part === 'querystring' && field === 'cursor') return 'is not a cursor from a previous page';
        return undefined;
      case 'type':
        return path.length === 0 ? `must be a JSON ${String(params.type)}` : undefined;
      default:
        return undefined;
    }
  },
};

/** Fastify's schemaErrorFormatter: the problem itself travels as the validation error. */
export function formatValidationErrors(errors: FastifySchemaValidationError[], part: string): Problem {
  const { detail, errors: fields } = describeInvalidRequest(errors, part, API_FIELD_STYLE);
  return problems.invalidRequest(detail, fields);
}
