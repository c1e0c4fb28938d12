// What the bench sends for an operation type: a request built from the type's own schema
// (every required field, strings that are not codes named after the bench's resources),
// and the sandbox resources that request names, read off what the type's steps send
// downstream (a bank movement's `account`, a hold's `sku`), so the bench can open them
// before the run and count what moved after it. No operation type is named here: adding
// one to the registry adds it to the bench.
import { Value } from 'typebox/value';
import { defaultSettings, type OperationDefinition } from '../../../workflows/definition.js';
import { fieldsOf, type StepCall } from '../../../workflows/program.js';

export type Request = Record<string, unknown>;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  enum?: unknown[];
  examples?: unknown[];
  minimum?: number;
}

/** One value of `schema`: an example or the smallest value it allows; a free string is named by `name(path)`. */
function sample(schema: Schema, path: string[], name: (path: string[]) => string): unknown {
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((field) => [field, sample(schema.properties![field]!, [...path, field], name)]),
      );
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sample(schema.items!, path, name));
    case 'integer':
    case 'number':
      return typeof schema.examples?.[0] === 'number' ? schema.examples[0] : (schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      if (schema.enum) return schema.examples?.find((e) => schema.enum!.includes(e)) ?? schema.enum[0];
      return name(path);
    default:
      throw new Error(`no sample for a schema of type ${String(schema.type)} at ${path.join('.') || 'the top'}`);
  }
}

/**
 * A valid request of `definition` whose free strings read `<prefix>_<field path>`
 * (`bench_account`, `bench_from`, `bench_items_sku`): distinct fields name distinct
 * resources, so a transfer's `from` is not its `to`.
 */
export function sampleRequest(definition: OperationDefinition, prefix: string): Request {
  const request = sample(definition.request as Schema, [], (path) => [prefix, ...path].join('_')) as Request;
  const problems = [
    ...(Value.Check(definition.request, request) ? [] : [...Value.Errors(definition.request, request)].map((e) => e.message)),
    ...(definition.check?.(request as never) ?? []).map((p) => `${p.field} ${p.message}`),
  ];
  if (problems.length > 0)
    throw new Error(`the bench cannot build a valid ${definition.type} request from its schema: ${problems.join('; ')}`);
  return request;
}

/** The bank accounts and the SKUs a request names at the sandboxes. */
export interface Resources {
  /** Each account with what one movement of the operation takes or gives: the amount, in the currency. */
  accounts: Map<string, { amount: number; currency: string }>;
  /** Each SKU with the quantity one operation holds. */
  skus: Map<string, number>;
}

/** What a step's call sends downstream: its declared body or its activity's input. */
function sent(call: StepCall, request: Request, settings: Record<string, number>): unknown {
  const map = call.kind === 'http' ? call.body : call.input;
  return map && fieldsOf(map, request, settings);
}

function collect(value: unknown, into: Resources): void {
  if (Array.isArray(value)) {
    for (const v of value) collect(v, into);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const v = value as Record<string, unknown>;
  if (typeof v.account === 'string' && typeof v.amount === 'number' && typeof v.currency === 'string')
    into.accounts.set(v.account, { amount: v.amount, currency: v.currency });
  if (typeof v.sku === 'string' && typeof v.quantity === 'number') into.skus.set(v.sku, (into.skus.get(v.sku) ?? 0) + v.quantity);
  for (const child of Object.values(v)) if (typeof child === 'object') collect(child, into);
}

/** The resources `request` names, as its forward steps send them (a bank movement's `account`, a hold's `sku`). */
export function resourcesOf(definition: OperationDefinition, request: Request): Resources {
  const into: Resources = { accounts: new Map(), skus: new Map() };
  for (const step of definition.steps) collect(sent(step.call, request, defaultSettings(definition)), into);
  return into;
}

/** The resources of several requests together (the bench shares accounts between types). */
export function mergeResources(all: readonly Resources[]): Resources {
  const into: Resources = { accounts: new Map(), skus: new Map() };
  for (const r of all) {
    for (const [k, v] of r.accounts) into.accounts.set(k, v);
    for (const [k, v] of r.skus) into.skus.set(k, v);
  }
  return into;
}
