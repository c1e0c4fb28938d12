// What an operation is, as data: the one definition every part derives from. The API
// builds its route, validation, OpenAPI entry, fingerprint and summaries from it, and at
// each start records the workflow-facing part of it (its program, program.ts) in the
// operation's input; the one generic workflow interprets that recorded program, never the
// definition a worker holds today, so a definition can change while operations started on
// an earlier one are still in flight. The client, the CLI and the chaos auditor loop over
// the same definitions.
//
// Everything on the workflow's path is data: a step's call names its method and path, and
// its body is a field map (request fields, settings, constants), never a function. Functions
// stay where they run once, at the start, in the API: `check`, `summary`, `details`.
//
// Imported by workflow code, so it must stay deterministic: plain data, pure functions, no
// I/O. A definition may live outside this repository's source folders and be loaded by
// configuration (see catalog.ts); outside code imports it as `retrysafe-server/define`.
import type { Static, TObject } from 'typebox';
import { programProblems, type FieldMap, type FieldSource, type StepCall } from './program.js';

export type { DeclaredCall, ActivityCall, FieldMap, FieldSource, HttpMethod, StepCall } from './program.js';

export interface CompensationDefinition {
  /** Snake case, the activity's verb: `reverse_charge`. Also the activity type its declared call is scheduled as. */
  name: string;
  /**
   * Acts on the key of the step it undoes. Its answer says what it did: `status: "fenced"`
   * means the step had not taken effect and now never will (a tombstone); any other answer
   * means whatever the step did is undone.
   */
  call: StepCall;
}

export interface StepDefinition {
  /** Snake case: `charge_payment`. Shown in the resource, the memo and the Web UI; the activity type of its declared call. */
  name: string;
  /** The downstream key is `<tenant>/<key>/<keySuffix>`; two steps may share one (a confirm acts on its hold). */
  keySuffix: string;
  /** The service the call speaks to; a declared call's base URL comes from the worker's configuration under this name. */
  service: string;
  call: StepCall;
  /**
   * Business refusals: the downstream problem `code` → the operation's error code (often the
   * same). A refused step took no effect: its own compensation is skipped, the earlier ones run.
   */
  businessErrors: Readonly<Record<string, string>>;
  /** Registered before the step runs; a step without one (a last confirm) cannot be fenced. */
  compensation?: CompensationDefinition;
  /** Result fields of the operation taken from this step's answer: result field → answer field. */
  result?: Readonly<Record<string, string>>;
  /** The operation's error code when this step is fenced; the operation's own by default. */
  unavailableCode?: string;
  /**
   * How an auditor reads what the step did, under its key, at its service: a GET of `path`
   * (`{key}` as in a declared call) whose answer's `status` is one of `present` while the
   * step's effect is in force (`captured`; not `reversed`, `fenced`, `declined`). A succeeded
   * operation has every step's effect present, a failed one none. Tests and the chaos run
   * check the ledgers with it; a step without one is not audited. Not part of the program.
   */
  effect?: { path: string; present: readonly string[] };
}

/** A number the definition's calls may read (`{ setting: 'holdTtlSeconds' }`), fixed for each operation at its start. */
export interface SettingDefinition {
  default: number;
  minimum: number;
  maximum: number;
  description: string;
}

export interface OperationDefinition<S extends TObject = TObject> {
  /** The workflow type and `type` of the resource: lower case, `[a-z][a-z0-9_]*`. */
  type: string;
  /** The collection it is started in: `POST /v1/<plural>`. */
  plural: string;
  /** One sentence for the OpenAPI document and the CLI's help. */
  description: string;
  /** The request body (TypeBox): validated at the edge, normalised to exactly its fields. */
  request: S;
  /** Top-level fields the idempotency key is bound to; every field when absent. */
  fingerprint?: readonly (keyof Static<S> & string)[];
  /** Rules across fields that a schema cannot say: `[{ field, message }]` for each violation (400). */
  check?: (request: Static<S>) => Array<{ field: string; message: string }>;
  steps: readonly StepDefinition[];
  /** The operation's error code when a step is fenced (its outcome unknown at its deadline). */
  unavailableCode: string;
  /** Numbers the steps' field maps name (checkout's hold time), each with its default and bounds. */
  settings?: Readonly<Record<string, SettingDefinition>>;
  /** The Web UI's one line about a request (after `<type> <workflowId>`), e.g. `EUR 12.50`. */
  summary?: (request: Static<S>) => string;
  /** The Web UI's details of a request: markdown lines. */
  details?: (request: Static<S>) => string[];
  /** Other names of its CLI command (`pay` for payment). */
  cliAliases?: readonly string[];
}

/** The settings' values an operation starts with when nothing overrides them. */
export function defaultSettings(definition: Pick<OperationDefinition, 'settings'>): Record<string, number> {
  return Object.fromEntries(Object.entries(definition.settings ?? {}).map(([name, s]) => [name, s.default]));
}

/** Every request field and setting a step's calls read, to check they exist. */
function sourcesOf(call: StepCall | undefined): FieldSource[] {
  if (!call) return [];
  const map: FieldMap | undefined = call.kind === 'http' ? call.body : call.input;
  return Object.values(map ?? {});
}

/** Checks a definition's facts at load time; throws on the first that is wrong. */
export function defineOperation<S extends TObject>(definition: OperationDefinition<S>): OperationDefinition<S> {
  // Loaded from outside, a definition is whatever a folder exported: check its shape before reading it.
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    throw new Error(`an operation definition must be an object, not ${JSON.stringify(definition) ?? typeof definition}`);
  }
  const fail = (why: string): never => {
    throw new Error(`operation ${JSON.stringify(definition.type)}: ${why}`);
  };
  if (typeof definition.type !== 'string' || !/^[a-z][a-z0-9_]{0,39}$/.test(definition.type))
    fail('its type must match [a-z][a-z0-9_]{0,39}');
  if (typeof definition.plural !== 'string' || !/^[a-z][a-z0-9-]{0,39}$/.test(definition.plural))
    fail('its plural must match [a-z][a-z0-9-]{0,39}');
  if (typeof definition.description !== 'string' || definition.description.trim() === '') fail('it needs a description');
  const request: unknown = definition.request;
  if (!isObjectSchema(request)) fail('its request must be an object schema (RequestBody or Type.Object)');
  for (const hook of ['check', 'summary', 'details'] as const) {
    if (definition[hook] !== undefined && typeof definition[hook] !== 'function') fail(`its ${hook} must be a function`);
  }
  if (!Array.isArray(definition.steps) || definition.steps.length === 0) fail('it needs at least one step');
  const settings = definition.settings ?? {};
  for (const [name, s] of Object.entries(settings)) {
    if (!/^[a-z][A-Za-z0-9]{0,39}$/.test(name)) fail(`setting name ${JSON.stringify(name)} must be camel case`);
    if (typeof s !== 'object' || s === null) fail(`setting ${name} must be { default, minimum, maximum, description }`);
    if (![s.default, s.minimum, s.maximum].every(Number.isSafeInteger) || s.minimum > s.default || s.default > s.maximum) {
      fail(`setting ${name} needs integer minimum <= default <= maximum`);
    }
  }
  // The steps as written, not their program: making it would read a malformed step before it is checked.
  const { type, unavailableCode, steps } = definition;
  const [problem] = programProblems({ type, unavailableCode, settings: defaultSettings(definition), steps });
  if (problem) fail(problem);
  const fields = Object.keys(definition.request.properties);
  for (const step of definition.steps) {
    for (const source of [...sourcesOf(step.call), ...sourcesOf(step.compensation?.call)]) {
      // An undeclared setting is the program's problem above: its settings are the declared ones.
      if (typeof source === 'string' && !fields.includes(source))
        fail(`${step.name} reads ${source}, which is not in the request`);
    }
    if (step.effect && (typeof step.effect.path !== 'string' || !/^\/(?!\/)/.test(step.effect.path)))
      fail(`${step.name}: its effect path must start with one /`);
  }
  if (definition.fingerprint !== undefined && !Array.isArray(definition.fingerprint))
    fail('its fingerprint must be a list of request fields');
  for (const field of definition.fingerprint ?? []) {
    if (!fields.includes(field)) fail(`fingerprinted field ${field} is not in the request`);
  }
  return definition;
}

function isObjectSchema(schema: unknown): schema is TObject {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, properties } = schema as { type?: unknown; properties?: unknown };
  return type === 'object' && typeof properties === 'object' && properties !== null && !Array.isArray(properties);
}

/**
 * A step that is one declared call to a service keeping the keyed contract (the sandboxes'
 * and the shipping example's): `POST <collection>` with the derived key as Idempotency-Key
 * and a body from the request (`body`: body field → request field, setting or constant),
 * undone by `POST <collection>/{key}/<undo.action>`, its effect read at
 * `GET <collection>/{key}`, in force while its status is one of `present`.
 */
export function keyedHttpStep(step: {
  name: string;
  keySuffix: string;
  service: string;
  collection: string;
  body: FieldMap;
  businessErrors: Readonly<Record<string, string>>;
  undo: { name: string; action: string };
  result: Readonly<Record<string, string>>;
  present: readonly string[];
  unavailableCode?: string;
}): StepDefinition {
  return {
    name: step.name,
    keySuffix: step.keySuffix,
    service: step.service,
    call: { kind: 'http', method: 'POST', path: step.collection, body: step.body },
    businessErrors: step.businessErrors,
    compensation: {
      name: step.undo.name,
      call: { kind: 'http', method: 'POST', path: `${step.collection}/{key}/${step.undo.action}` },
    },
    result: step.result,
    ...(step.unavailableCode ? { unavailableCode: step.unavailableCode } : {}),
    effect: { path: `${step.collection}/{key}`, present: step.present },
  };
}
