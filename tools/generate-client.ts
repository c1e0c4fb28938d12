// Writes the client package's generated files, from the server's own definitions:
// - client/lib/operations.json: the built-in operations (each type's collection, description,
//   CLI aliases and request schema, as the API validates it), as data: the operations share
//   most of their fields, and a table of schemas is read by code, not by people;
// - client/lib/operations.ts: a TypeScript type per request, each type's result fields, each
//   collection's name, and the table typed by them;
// - client/lib/resource-schema.ts: the operation resource's JSON Schema, as the API serialises
//   it, for the client's guard of every answer (isOperation).
// The package is published on its own, so it cannot import the catalog or the API's
// schemas; it is generated from them instead, and test/client/generated.unit.test.ts fails when a
// file is not what this script writes now.
//   npm run generate
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { Operation, resultFields } from '../common/resource-schema.js';
import type { OperationDefinition } from '../workflows/definition.js';
import { builtInCatalog, type DefinitionCatalog } from '../workflows/catalog.js';

export const CLIENT_OPERATIONS_FILE = fileURLToPath(new URL('../client/lib/operations.ts', import.meta.url));
export const CLIENT_OPERATIONS_TABLE_FILE = fileURLToPath(new URL('../client/lib/operations.json', import.meta.url));
export const CLIENT_RESOURCE_SCHEMA_FILE = fileURLToPath(new URL('../client/lib/resource-schema.ts', import.meta.url));

/**
 * Fields of the resource an API a release older does not send: the guard accepts an answer
 * without them, so a client works against an API one release apart.
 */
const NEWER_FIELDS = ['cancelRequested', 'keyExpiresAt'];

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  description?: string;
};

/** The TypeScript type TypeBox's Static gives the schema (the subset request schemas use). */
export function typeOf(schema: Schema, indent = ''): string {
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, indent)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  // Type.Enum types its values; Type.String({ enum }) is a string to TypeBox (the enum
  // constrains, it does not type). Only TypeBox's own (non-enumerable) kind tells them apart.
  if (schema.enum && (schema.type === undefined || (schema as { '~kind'?: string })['~kind'] === 'Enum')) {
    return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  }
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(schema.items ?? {}, indent)}>`;
    case 'object': {
      const required = new Set(schema.required ?? []);
      const inner = `${indent}  `;
      const fields = Object.entries(schema.properties ?? {}).map(([name, property]) => {
        const doc = property.description ? `${inner}/** ${property.description.replace(/\*\//g, '*\\/')} */\n` : '';
        return `${doc}${inner}${name}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)};`;
      });
      return `{\n${fields.join('\n')}\n${indent}}`;
    }
    default:
      return 'unknown';
  }
}

const pascal = (type: string) => type.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

/**
 * The schema as the client checks it. A value with a `format` is checked by that format (the
 * client knows `iso4217` from the runtime's own table, as the API does), so the enum that
 * spells the format out for /openapi.json is left out here.
 */
function forClient(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forClient);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { enum: values, examples: _examples, ...rest } = schema as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, forClient(v)]));
  return values !== undefined && rest.format === undefined ? { ...out, enum: values } : out;
}

function describe(definition: OperationDefinition) {
  return {
    plural: definition.plural,
    description: definition.description,
    aliases: [...(definition.cliAliases ?? [])],
    request: forClient(JSON.parse(JSON.stringify(definition.request))) as Schema,
  };
}

/** A file as the repository keeps it: rendered, then formatted by the project's prettier settings. */
async function formatted(file: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}

export async function clientOperationsSource(catalog: DefinitionCatalog = builtInCatalog): Promise<string> {
  return formatted(CLIENT_OPERATIONS_FILE, renderClientOperations(catalog));
}

export async function clientOperationsTableSource(catalog: DefinitionCatalog = builtInCatalog): Promise<string> {
  return formatted(CLIENT_OPERATIONS_TABLE_FILE, renderClientOperationsTable(catalog));
}

export async function clientResourceSchemaSource(): Promise<string> {
  return formatted(CLIENT_RESOURCE_SCHEMA_FILE, renderResourceSchema());
}

/** The resource's schema for the guard: shapes and enums, without the words the document carries. */
function forGuard(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forGuard);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { description: _d, examples: _e, format: _f, ...rest } = schema as Record<string, unknown>;
  return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'properties' ? mapValues(v, forGuard) : forGuard(v)]));
}

function mapValues(record: unknown, f: (v: unknown) => unknown): unknown {
  return Object.fromEntries(Object.entries(record as Record<string, unknown>).map(([k, v]) => [k, f(v)]));
}

export function renderResourceSchema(): string {
  const schema = forGuard(JSON.parse(JSON.stringify(Operation))) as Schema;
  schema.required = (schema.required ?? []).filter((f) => !NEWER_FIELDS.includes(f));
  return [
    "// Generated by `npm run generate` (tools/generate-client.ts) from the API's own schema of the",
    '// operation resource: do not edit. The client checks every answer against it (isOperation),',
    "// so a proxy's error page or a truncated body never passes for an outcome. Fields a newer API",
    '// adds pass; the newest fields of this one are not required, for an API a release older.',
    '',
    `export const OPERATION_SCHEMA = ${JSON.stringify(schema, null, 2)} as const;`,
    '',
  ].join('\n');
}

export function renderClientOperationsTable(catalog: DefinitionCatalog = builtInCatalog): string {
  return `${JSON.stringify(Object.fromEntries(catalog.all.map((d) => [d.type, describe(d)])), null, 2)}\n`;
}

export function renderClientOperations(catalog: DefinitionCatalog = builtInCatalog): string {
  const types = catalog.all.map((d) => {
    const name = `${pascal(d.type)}Params`;
    return `/** \`POST /v1/${d.plural}\` body: ${d.description} */\nexport type ${name} = ${typeOf(d.request as Schema)};`;
  });
  return [
    '// Generated by `npm run generate` (tools/generate-client.ts) from the operation catalog:',
    '// do not edit. The built-in operations as the API defines them: the TypeScript type of each',
    '// request and result and the name of each collection here; their description, CLI aliases',
    '// and request schema in operations.json, as data.',
    "import type { OperationDescription } from './discovery.js';",
    "import table from './operations.json' with { type: 'json' };",
    '',
    ...types.flatMap((t) => [t, '']),
    '/** The request of each built-in operation type. */',
    'export interface OperationRequests {',
    ...catalog.all.map((d) => `  ${d.type}: ${pascal(d.type)}Params;`),
    '}',
    '',
    "/** The result of each built-in operation type once it succeeded: its steps' result fields. */",
    'export interface OperationResults {',
    ...catalog.all.map(
      (d) =>
        `  ${d.type}: { ${resultFields(d)
          .map((f) => `${f}: string;`)
          .join(' ')} };`,
    ),
    '}',
    '',
    '/** The collection of each built-in operation type: `POST /v1/<plural>`. */',
    'export interface OperationPlurals {',
    ...catalog.all.map((d) => `  ${d.type}: ${JSON.stringify(d.plural)};`),
    '}',
    '',
    '/** The built-in operations: collection, description, CLI aliases and request schema. */',
    'export const OPERATIONS = table as {',
    '  readonly [T in keyof OperationRequests]: OperationDescription & { readonly plural: OperationPlurals[T] };',
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CLIENT_OPERATIONS_FILE, await clientOperationsSource());
  writeFileSync(CLIENT_OPERATIONS_TABLE_FILE, await clientOperationsTableSource());
  writeFileSync(CLIENT_RESOURCE_SCHEMA_FILE, await clientResourceSchemaSource());
  console.log(`wrote ${CLIENT_OPERATIONS_FILE}, ${CLIENT_OPERATIONS_TABLE_FILE} and ${CLIENT_RESOURCE_SCHEMA_FILE}`);
}
