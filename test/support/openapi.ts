// The API's OpenAPI document as a validator needs it: its named schemas
// (`#/components/schemas/...`) written in place, so one answer's schema can be checked on
// its own. The document has no recursive schemas, so every reference can be inlined.

type Json = unknown;

const PREFIX = '#/components/schemas/';

/** The document with every reference to a named schema replaced by that schema. */
export function dereference<T>(document: T): T {
  const schemas = ((document as { components?: { schemas?: Record<string, Json> } }).components?.schemas ?? {}) as Record<
    string,
    Json
  >;
  const inline = (value: Json, seen: readonly string[]): Json => {
    if (Array.isArray(value)) return value.map((v) => inline(v, seen));
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, Json>;
    const ref = record.$ref;
    if (typeof ref === 'string' && ref.startsWith(PREFIX)) {
      const name = ref.slice(PREFIX.length);
      if (seen.includes(name)) throw new Error(`the schema ${name} refers to itself`);
      if (!(name in schemas)) throw new Error(`the document has no schema ${name}`);
      return inline(schemas[name], [...seen, name]);
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, k === 'discriminator' ? v : inline(v, seen)]));
  };
  return inline(document, []) as T;
}
