// What an operation is, as data: the one definition every part derives from. The API
// builds its route, validation, OpenAPI entry, fingerprint and summaries from it; the saga
// runs its steps in order, each with the compensation it registers first; the client, the
// CLI and the chaos auditor loop over the same list. Workflow logic stays code (saga.ts,
// operation.ts); the facts about an operation are here.
//
// Imported by workflow code, so it must stay deterministic: plain data, pure functions of
// the request, no I/O. A definition may live outside this repository's source folders and
// be loaded by configuration (see registry.ts).
import type { Static, TObject } from 'typebox';

/** An HTTP method a declared call may use. */
export type HttpMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A keyed HTTP call made by the generic service activity, without code of its own. `path`
 * may hold `{key}`, replaced by the percent-encoded downstream key; the key is also sent as
 * `Idempotency-Key`. Answers are classified by one rule: 2xx done; a 4xx problem whose
 * `code` the step lists as a business error: refused, final; 408, 409 (in progress), 425,
 * 429, 5xx, timeouts and resets: retried with the same key until the step's deadline; any
 * other 4xx: final, and the step is fenced by its compensation.
 */
export interface DeclaredCall<R> {
  kind: 'http';
  method: HttpMethod;
  path: string;
  /** The JSON body, built from the operation's request; none for a call keyed by its path. */
  body?: (request: R) => Record<string, unknown>;
}

/**
 * A call made by an activity with code of its own, registered by the worker under
 * `activity`: it is called as `activity(target, input)`, or `activity(target)` without
 * `input`. Its name and input are recorded in every history that ran it: never rename one
 * that has run.
 */
export interface ActivityCall<R> {
  kind: 'activity';
  activity: string;
  input?: (request: R, settings: StepSettings) => unknown;
}

export type StepCall<R> = DeclaredCall<R> | ActivityCall<R>;

/** What a step's input may depend on besides the request: chosen by the API at start. */
export interface StepSettings {
  holdTtlSeconds: number;
}

export interface CompensationDefinition<R> {
  /** Snake case, the activity's verb: `reverse_charge`. */
  name: string;
  /**
   * Acts on the key of the step it undoes. Its answer says what it did: `status: "fenced"`
   * means the step had not taken effect and now never will (a tombstone); any other answer
   * means whatever the step did is undone.
   */
  call: StepCall<R>;
}

export interface StepDefinition<R> {
  /** Snake case: `charge_payment`. Shown in the resource, the memo and the Web UI. */
  name: string;
  /** The downstream key is `<tenant>/<key>/<keySuffix>`; two steps may share one (a confirm acts on its hold). */
  keySuffix: string;
  /** The service the call speaks to; a declared call's base URL comes from the worker's configuration under this name. */
  service: string;
  call: StepCall<R>;
  /**
   * Business refusals: the downstream problem `code` → the operation's error code (often the
   * same). A refused step took no effect: its own compensation is skipped, the earlier ones run.
   */
  businessErrors: Readonly<Record<string, string>>;
  /** Registered before the step runs; a step without one (a last confirm) cannot be fenced. */
  compensation?: CompensationDefinition<R>;
  /** Result fields of the operation taken from this step's answer: result field → answer field. */
  result?: Readonly<Record<string, string>>;
  /** The operation's error code when this step is fenced; the operation's own by default. */
  unavailableCode?: string;
  /**
   * How an auditor reads what the step did, under its key, at its service: a GET of `path`
   * (`{key}` as in a declared call) whose answer's `status` is one of `present` while the
   * step's effect is in force (`captured`; not `reversed`, `fenced`, `declined`). A succeeded
   * operation has every step's effect present, a failed one none. Tests and the chaos run
   * check the ledgers with it; a step without one is not audited.
   */
  effect?: { path: string; present: readonly string[] };
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
  steps: readonly StepDefinition<Static<S>>[];
  /** The operation's error code when a step is fenced (its outcome unknown at its deadline). */
  unavailableCode: string;
  /** The Web UI's one line about a request (after `<type> <workflowId>`), e.g. `EUR 12.50`. */
  summary?: (request: Static<S>) => string;
  /** The Web UI's details of a request: markdown lines. */
  details?: (request: Static<S>) => string[];
  /** Other names of its CLI command (`pay` for payment). */
  cliAliases?: readonly string[];
}

/** Checks a definition's facts at load time; throws on the first that is wrong. */
export function defineOperation<S extends TObject>(definition: OperationDefinition<S>): OperationDefinition<S> {
  const fail = (why: string): never => {
    throw new Error(`operation ${JSON.stringify(definition.type)}: ${why}`);
  };
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(definition.type)) fail('its type must match [a-z][a-z0-9_]{0,39}');
  if (!/^[a-z][a-z0-9-]{0,39}$/.test(definition.plural)) fail('its plural must match [a-z][a-z0-9-]{0,39}');
  if (definition.steps.length === 0) fail('it needs at least one step');
  const names = new Set<string>();
  for (const step of definition.steps) {
    for (const name of [step.name, step.compensation?.name]) {
      if (name === undefined) continue;
      if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) fail(`step or compensation name ${JSON.stringify(name)} must be snake case`);
      if (names.has(name)) fail(`${name} is named twice`);
      names.add(name);
    }
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(step.keySuffix)) fail(`${step.name}: key suffix must match [a-z][a-z0-9_-]{0,31}`);
    if (!/^[a-z][a-z0-9_-]{0,39}$/.test(step.service)) fail(`${step.name}: service must match [a-z][a-z0-9_-]{0,39}`);
  }
  const fields = Object.keys(definition.request.properties);
  for (const field of definition.fingerprint ?? []) {
    if (!fields.includes(field)) fail(`fingerprinted field ${field} is not in the request`);
  }
  return definition;
}

/**
 * A step that is one declared call to a service keeping the keyed contract (the sandboxes'
 * and the shipping example's): `POST <collection>` with the derived key as Idempotency-Key
 * and a body of request fields (`body`: body field → request field), undone by
 * `POST <collection>/{key}/<undo.action>`, its effect read at `GET <collection>/{key}`, in
 * force while its status is one of `present`.
 */
export function keyedHttpStep<const B extends Readonly<Record<string, string>>>(step: {
  name: string;
  keySuffix: string;
  service: string;
  collection: string;
  body: B;
  businessErrors: Readonly<Record<string, string>>;
  undo: { name: string; action: string };
  result: Readonly<Record<string, string>>;
  present: readonly string[];
}): StepDefinition<Record<B[keyof B], unknown>> {
  const body = (request: Record<B[keyof B], unknown>) =>
    Object.fromEntries(Object.entries(step.body).map(([field, from]) => [field, request[from as B[keyof B]]]));
  return {
    name: step.name,
    keySuffix: step.keySuffix,
    service: step.service,
    call: { kind: 'http', method: 'POST', path: step.collection, body },
    businessErrors: step.businessErrors,
    compensation: {
      name: step.undo.name,
      call: { kind: 'http', method: 'POST', path: `${step.collection}/{key}/${step.undo.action}` },
    },
    result: step.result,
    effect: { path: `${step.collection}/{key}`, present: step.present },
  };
}
