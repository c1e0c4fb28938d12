// Validation errors from both validators in use (Ajv in the API, TypeBox's compiler in the
// sandboxes) read into the same `{field, message}` entries.
import type { FastifySchemaValidationError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { API_FIELD_STYLE } from '../../client/api/validation.js';
import { describeInvalidRequest, MAX_FIELD_ERRORS, validationIssues } from '../../common/http/field-errors.js';
import { SANDBOX_FIELD_STYLE } from '../../downstream/shared/http.js';

const error = (e: Partial<FastifySchemaValidationError>): FastifySchemaValidationError =>
  ({
    keyword: 'type',
    instancePath: '',
    schemaPath: '#',
    params: {},
    message: 'must be integer',
    ...e,
  }) as FastifySchemaValidationError;

describe('validationIssues', () => {
  it('reads a missing property the way either validator reports it', () => {
    const ajv = error({ keyword: 'required', instancePath: '/items/0', params: { missingProperty: 'sku' } });
    const typebox = error({ keyword: 'required', instancePath: '/items/0', params: { requiredProperties: ['sku', 'quantity'] } });
    expect(validationIssues([ajv]).map((i) => [i.path, i.message])).toEqual([[['items', '0', 'sku'], 'is required']]);
    expect(validationIssues([typebox]).map((i) => i.path)).toEqual([
      ['items', '0', 'sku'],
      ['items', '0', 'quantity'],
    ]);
  });

  it('reads an unexpected property once, though TypeBox reports it twice', () => {
    const issues = validationIssues([
      error({ keyword: 'additionalProperties', params: { additionalProperties: ['tip'] } }),
      error({ keyword: 'boolean', instancePath: '/tip', schemaPath: '#/additionalProperties', message: 'must not be present' }),
    ]);
    expect(issues.map((i) => [i.path, i.message])).toEqual([[['tip'], 'is not an allowed field']]);
  });

  it('unescapes JSON pointer segments', () => {
    expect(validationIssues([error({ instancePath: '/a~1b/c~0d' })])[0]!.path).toEqual(['a/b', 'c~d']);
  });
});

describe('describeInvalidRequest', () => {
  const errors = [
    error({ instancePath: '/items/0/quantity' }),
    error({ instancePath: '/items/0/quantity', keyword: 'minimum', message: 'must be >= 1' }),
    error({ keyword: 'required', params: { missingProperty: 'account' } }),
  ];

  it("names each field once, in each service's own style", () => {
    expect(describeInvalidRequest(errors, 'body', API_FIELD_STYLE).errors).toEqual([
      { field: 'items[0].quantity', message: 'must be integer' },
      { field: 'account', message: 'is required' },
    ]);
    expect(describeInvalidRequest(errors, 'body', SANDBOX_FIELD_STYLE).errors.map((e) => e.field)).toEqual([
      'items.0.quantity',
      'account',
    ]);
    expect(describeInvalidRequest([error({ instancePath: '/sku' })], 'params', SANDBOX_FIELD_STYLE).errors[0]!.field).toBe(
      'params.sku',
    );
  });

  it('names the part itself when the whole value is at fault', () => {
    const root = [error({ params: { type: 'object' }, message: 'must be object' })];
    expect(describeInvalidRequest(root, 'body', API_FIELD_STYLE)).toEqual({
      detail: 'the body is not valid: body must be a JSON object',
      errors: [{ field: 'body', message: 'must be a JSON object' }],
    });
    expect(describeInvalidRequest(root, 'querystring', SANDBOX_FIELD_STYLE).detail).toBe(
      'the query is not valid: querystring must be object',
    );
  });

  it(`names at most ${MAX_FIELD_ERRORS} fields, and says there were more`, () => {
    const many = Array.from({ length: 30 }, (_, i) => error({ instancePath: `/items/${i}/quantity` }));
    const { errors: fields, detail } = describeInvalidRequest(many, 'body', SANDBOX_FIELD_STYLE);
    expect(fields).toHaveLength(MAX_FIELD_ERRORS);
    expect(detail).toMatch(/; and more$/);
  });
});
