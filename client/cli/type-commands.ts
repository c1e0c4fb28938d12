// One command per operation type, made from its request schema: each top-level field is an
// option (`--account`, `--amount`, `--from`), a list of objects a repeatable option named
// after one entry (`--item sku_book:2`, the entry's fields in order, `:`-separated). The
// built-in operations come with the client (lib/operations.ts, generated from the API's
// catalog); one an API adds is described by its /openapi.json. Whatever the options let
// through, the request's schema checks before anything is sent (a usage error, exit 2).
import { Command, InvalidArgumentError, Option } from 'commander';
import type { OperationDescription } from '../lib/discovery.js';
import { schemaProblem, type JsonSchema } from '../lib/schema-check.js';
import { EXIT } from './exit-codes.js';
import { shellQuote } from './shell.js';

/** An option's value as the request carries it. */
type Parse = (raw: string, previous?: unknown) => unknown;

interface FieldOption {
  field: string;
  flag: string;
  placeholder: string;
  describe: string;
  required: boolean;
  parse: Parse;
}

const kebab = (name: string) =>
  name
    .replace(/_/g, '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();
/** `items` → `item`: the option names one entry of a list. */
const singular = (name: string) => (name.endsWith('s') && name.length > 1 ? name.slice(0, -1) : name);

function scalarParser(schema: JsonSchema): Parse {
  switch (schema.type) {
    case 'integer':
    case 'number':
      return (raw) => {
        const text = raw.trim();
        const ok = schema.type === 'integer' ? /^-?\d+$/.test(text) : /^-?\d+(\.\d+)?$/.test(text);
        if (!ok) throw new InvalidArgumentError(`must be a ${schema.type === 'integer' ? 'whole number' : 'number'}`);
        return Number(text);
      };
    case 'boolean':
      return (raw) => {
        if (!['true', 'false'].includes(raw.trim())) throw new InvalidArgumentError('must be true or false');
        return raw.trim() === 'true';
      };
    default:
      // A currency code is upper case whatever the shell typed; the format check says the rest.
      return schema.format === 'iso4217' ? (raw) => raw.trim().toUpperCase() : (raw) => raw;
  }
}

function placeholderOf(name: string, schema: JsonSchema): string {
  if (schema.type === 'array' && schema.items?.type === 'object') return Object.keys(schema.items.properties ?? {}).join(':');
  if (schema.type === 'integer' || schema.type === 'number') return 'n';
  if (schema.format === 'iso4217') return 'code';
  return name;
}

function optionsOf(request: JsonSchema): FieldOption[] {
  const required = new Set(request.required ?? []);
  return Object.entries(request.properties ?? {}).map(([field, schema]) => {
    const isList = schema.type === 'array';
    const item = schema.items ?? {};
    const parts = Object.entries(item.properties ?? {});
    let parse: Parse;
    let describe = schema.description ?? '';
    if (isList && item.type === 'object') {
      // `sku_book:2` → { sku: 'sku_book', quantity: 2 }; repeatable.
      parse = (raw, previous) => {
        const values = raw.split(':');
        if (values.length !== parts.length || values.some((v) => v === '')) {
          throw new InvalidArgumentError(`must be ${parts.map(([n]) => `<${n}>`).join(':')}`);
        }
        const entry = Object.fromEntries(parts.map(([n, s], i) => [n, scalarParser(s)(values[i]!)]));
        return [...((previous as unknown[] | undefined) ?? []), entry];
      };
      describe = `${describe ? `${describe}: ` : ''}one entry, ${parts.map(([n]) => n).join(':')} (repeat for more)`;
    } else if (isList) {
      parse = (raw, previous) => [...((previous as unknown[] | undefined) ?? []), scalarParser(item)(raw)];
      describe = `${describe ? `${describe} ` : ''}(repeat for more)`;
    } else {
      parse = scalarParser(schema);
    }
    const flag = kebab(isList ? singular(field) : field);
    return { field, flag, placeholder: placeholderOf(field, schema), describe, required: required.has(field), parse };
  });
}

/** The request the options make, in the schema's field order; fields not given are left out. */
export function requestFrom(request: JsonSchema, values: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const option of optionsOf(request)) {
    const value = values[camel(option.flag)];
    if (value !== undefined) body[option.field] = value;
  }
  return body;
}

/** Commander's name for an option's value: `--dry-run` → `dryRun`. */
const camel = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The first field the API would refuse, as a usage problem naming its option; or undefined. */
export function requestProblem(request: JsonSchema, body: Record<string, unknown>): string | undefined {
  const problem = schemaProblem(request, body);
  if (!problem) return undefined;
  const field = /^[^.[]+/.exec(problem.field)?.[0] ?? problem.field;
  const option = optionsOf(request).find((o) => o.field === field);
  const inner = problem.field.slice(field.length).replace(/^\[\d+\]\.?/, '');
  return `'--${option?.flag ?? kebab(field)}' is invalid: ${inner ? `${inner} ` : ''}${problem.message}`;
}

/**
 * `retrysafe <type> --field value ...`, with `--key` and what `withOptions` adds (connection
 * options); the action gets the request body and the options. The arguments of a retry line
 * are the options as given, so repeating it sends the same request.
 */
export function operationCommand(
  type: string,
  description: OperationDescription,
  act: (body: Record<string, unknown>, retryArgs: string[], options: Record<string, unknown>) => Promise<void>,
): Command {
  const command = new Command(type).description(description.description);
  for (const alias of description.aliases) command.alias(alias);
  const fields = optionsOf(description.request);
  for (const field of fields) {
    const option = new Option(`--${field.flag} <${field.placeholder}>`, field.describe).argParser(field.parse);
    if (field.required) option.makeOptionMandatory();
    command.addOption(option);
  }
  command.action(async (options: Record<string, unknown>) => {
    const body = requestFrom(description.request, options);
    const problem = requestProblem(description.request, body);
    if (problem !== undefined) command.error(`error: option ${problem}`, { exitCode: EXIT.usage, code: 'retrysafe.usage' });
    await act(body, retryArgs(fields, options), options);
  });
  return command;
}

/** The options as given, in the schema's order, quoted for a shell. */
function retryArgs(fields: readonly FieldOption[], options: Record<string, unknown>): string[] {
  const args: string[] = [];
  for (const field of fields) {
    const value = options[camel(field.flag)];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const text = typeof v === 'object' && v !== null ? Object.values(v).map(String).join(':') : String(v);
      args.push(`--${field.flag}`, shellQuote(text));
    }
  }
  return args;
}

/** A usage line for the command: `retrysafe transfer --from <from> --to <to> ... [--key <key>] [--json]`. */
export function usageLine(type: string, description: OperationDescription): string {
  const parts = optionsOf(description.request).map((f) => {
    const one = `--${f.flag} <${f.placeholder}>${description.request.properties?.[f.field]?.type === 'array' ? '...' : ''}`;
    return f.required ? one : `[${one}]`;
  });
  return ['retrysafe', type, ...parts, '[--key <key>]', '[--json]'].join(' ');
}
