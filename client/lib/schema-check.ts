// Checks a request against its operation's JSON Schema (the subset request schemas use:
// objects, strings, integers, arrays, enums and the `iso4217` format) before it is sent,
// so the CLI can name a bad option instead of passing on the API's 400. The API stays the
// authority: it validates again with the full schema.

export interface JsonSchema {
  type?: string;
  anyOf?: readonly JsonSchema[];
  patternProperties?: Readonly<Record<string, JsonSchema>>;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: readonly unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  description?: string;
}

/** Formats the client knows; an unknown format is left to the API. */
const FORMATS: Record<string, { check: (v: string) => boolean; message: string }> = {
  iso4217: {
    check: (v) => new Set(Intl.supportedValuesOf('currency')).has(v),
    message: 'must be an ISO 4217 currency code such as EUR or USD',
  },
};

/**
 * The API's own patterns in words (what its answer says); any other pattern is named as it
 * is. They are the server's IDENTIFIER_PATTERN and FREE_TEXT_PATTERN (the package carries
 * nothing of the server: test/cli/request-checks.unit.test.ts holds them to it).
 */
export const PATTERN_RULES: Readonly<Record<string, string>> = {
  '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$': 'must start with a letter or digit and hold only letters, digits, ".", "_", ":" or "-"',
  '^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069]*$':
    'must not hold control characters, line separators or bidirectional marks',
};

export interface SchemaProblem {
  /** `amount`, `items[1].sku`; empty for the whole value. */
  field: string;
  message: string;
}

/** Length in Unicode code points, as JSON Schema counts it (an emoji is one character, not two). */
const chars = (text: string) => [...text].length;

function range(min: number | undefined, max: number | undefined, unit: string): string {
  if (min !== undefined && max !== undefined) return `${min}-${max} ${unit}`;
  return min !== undefined ? `at least ${min} ${unit}` : `at most ${max} ${unit}`;
}

/** The first thing about `value` the schema refuses, or undefined. */
export function schemaProblem(schema: JsonSchema, value: unknown, field = ''): SchemaProblem | undefined {
  if (schema.anyOf) {
    const problems = schema.anyOf.map((s) => schemaProblem(s, value, field));
    return problems.some((p) => p === undefined) ? undefined : problems[0];
  }
  if (schema.enum && !schema.enum.includes(value))
    return { field, message: `must be one of ${schema.enum.map(String).join(', ')}` };
  // An unknown type is left to the API.
  return schema.type !== undefined && Object.hasOwn(BY_TYPE, schema.type)
    ? BY_TYPE[schema.type]!(schema, value, field)
    : undefined;
}

type Check = (schema: JsonSchema, value: unknown, field: string) => SchemaProblem | undefined;

const BY_TYPE: Readonly<Record<string, Check>> = {
  string: stringProblem,
  integer: numberProblem,
  number: numberProblem,
  boolean: (_schema, value, field) => (typeof value === 'boolean' ? undefined : { field, message: 'must be true or false' }),
  null: (_schema, value, field) => (value === null ? undefined : { field, message: 'must be null' }),
  array: arrayProblem,
  object: objectProblem,
};

function stringProblem(schema: JsonSchema, value: unknown, field: string): SchemaProblem | undefined {
  const at = (message: string): SchemaProblem => ({ field, message });
  if (typeof value !== 'string') return at('must be text');
  const n = chars(value);
  if ((schema.minLength !== undefined && n < schema.minLength) || (schema.maxLength !== undefined && n > schema.maxLength)) {
    return at(`must be ${range(schema.minLength, schema.maxLength, 'characters')}`);
  }
  const format = schema.format ? FORMATS[schema.format] : undefined;
  if (format && !format.check(value)) return at(format.message);
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
    return at(PATTERN_RULES[schema.pattern] ?? `must match ${schema.pattern}`);
  }
  return undefined;
}

function numberProblem(schema: JsonSchema, value: unknown, field: string): SchemaProblem | undefined {
  const whole = schema.type === 'integer';
  const ok = typeof value === 'number' && Number.isFinite(value) && (!whole || Number.isInteger(value));
  const outside =
    ok && ((schema.minimum !== undefined && value < schema.minimum) || (schema.maximum !== undefined && value > schema.maximum));
  if (ok && !outside) return undefined;
  const what = whole ? 'a whole number' : 'a number';
  if (schema.minimum !== undefined && schema.maximum !== undefined) {
    return { field, message: `must be ${what} from ${schema.minimum} to ${schema.maximum}` };
  }
  return {
    field,
    message: `must be ${what}${schema.minimum !== undefined ? ` of at least ${schema.minimum}` : ''}${schema.maximum !== undefined ? ` of at most ${schema.maximum}` : ''}`,
  };
}

function arrayProblem(schema: JsonSchema, value: unknown, field: string): SchemaProblem | undefined {
  if (!Array.isArray(value)) return { field, message: 'must be a list' };
  if (
    (schema.minItems !== undefined && value.length < schema.minItems) ||
    (schema.maxItems !== undefined && value.length > schema.maxItems)
  ) {
    return { field, message: `must have ${range(schema.minItems, schema.maxItems, 'entries')}` };
  }
  for (const [i, item] of value.entries()) {
    const problem = schema.items ? schemaProblem(schema.items, item, `${field}[${i}]`) : undefined;
    if (problem) return problem;
  }
  return undefined;
}

function objectProblem(schema: JsonSchema, value: unknown, field: string): SchemaProblem | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { field, message: 'must be an object' };
  const record = value as Record<string, unknown>;
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (record[name] === undefined) return { field: field ? `${field}.${name}` : name, message: 'is required' };
  }
  for (const [name, v] of Object.entries(record)) {
    const path = field ? `${field}.${name}` : name;
    const property =
      properties[name] ??
      Object.entries(schema.patternProperties ?? {}).find(([pattern]) => new RegExp(pattern, 'u').test(name))?.[1];
    if (!property) {
      if (schema.additionalProperties === false) return { field: path, message: 'is not a field of this request' };
      continue;
    }
    if (v === undefined) continue;
    const problem = schemaProblem(property, v, path);
    if (problem) return problem;
  }
  return undefined;
}
