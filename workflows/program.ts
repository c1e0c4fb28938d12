// An operation's program: the workflow-facing part of its definition, as plain data. The
// API compiles it from the definition once, records it in every operation's input at the
// start, and the generic workflow interprets that recorded program (interpreter.ts), never
// the worker's current definition: an operation finishes with exactly the steps, keys,
// bodies and compensations it started with, whatever the definition says by then.
//
// A digest of the program is the definition's version (common/definition-version.ts): the
// same for every operation started on the same definition, another after any change a
// workflow could see.
//
// Deterministic (imported by workflow code): plain data and pure functions.

/** An HTTP method a declared call may use. */
export type HttpMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const HTTP_METHODS: readonly string[] = ['POST', 'PUT', 'PATCH', 'DELETE'];

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * Where a field of a call's body (or of an activity's input) takes its value: a request
 * field by name (`'amount'`), one of the definition's settings (`{ setting: 'holdTtlSeconds' }`)
 * or a constant (`{ value: 'express' }`).
 */
export type FieldSource = string | { setting: string } | { value: Json };
export type FieldMap = Readonly<Record<string, FieldSource>>;

/**
 * A keyed HTTP call made by retrysafe's own activity, without code of its own. `path` may
 * hold `{key}`, replaced by the percent-encoded downstream key; the key is also sent as
 * `Idempotency-Key`. Answers are classified by one rule: 2xx done; a 4xx problem whose
 * `code` the step lists as a business error: refused, final; 3xx, 408, 409 (in progress),
 * 425, 429, 5xx, timeouts and resets: retried with the same key until the step's deadline;
 * any other 4xx: final, and the step is fenced by its compensation.
 */
export interface DeclaredCall {
  kind: 'http';
  method: HttpMethod;
  /** A path on the service: starts with one `/`. */
  path: string;
  /** The JSON body; none (an empty object is sent) for a call keyed by its path. */
  body?: FieldMap;
}

/**
 * A call made by an activity with code of its own, registered by the worker under
 * `activity` (an outside folder's activities.ts): called as `activity(target, input)`, or
 * `activity(target)` without `input`.
 */
export interface ActivityCall {
  kind: 'activity';
  activity: string;
  input?: FieldMap;
}

export type StepCall = DeclaredCall | ActivityCall;

export interface ProgramStep {
  name: string;
  keySuffix: string;
  service: string;
  call: StepCall;
  businessErrors: Readonly<Record<string, string>>;
  compensation?: { name: string; call: StepCall };
  result?: Readonly<Record<string, string>>;
  unavailableCode?: string;
}

export interface OperationProgram {
  /** The digest of everything below: the definition's version. */
  version: string;
  type: string;
  unavailableCode: string;
  /** The settings' values for this operation, fixed at its start. */
  settings: Readonly<Record<string, number>>;
  steps: readonly ProgramStep[];
}

/** What running a program takes besides the workflow: services with a base URL, and registered activities. */
export interface ProgramNeeds {
  services: string[];
  activities: string[];
}

/** The part of a definition a program is made of. */
interface ProgramSource {
  type: string;
  unavailableCode: string;
  steps: readonly ProgramStep[];
}

/** A definition's program without its version, with `settings` as its settings' values. */
export function stepsProgram(
  definition: ProgramSource,
  settings: Readonly<Record<string, number>>,
): Omit<OperationProgram, 'version'> {
  return {
    type: definition.type,
    unavailableCode: definition.unavailableCode,
    settings: { ...settings },
    // Exactly the workflow-facing fields, in a fixed order, so the digest reads nothing else.
    steps: definition.steps.map((step) => ({
      name: step.name,
      keySuffix: step.keySuffix,
      service: step.service,
      call: callData(step.call),
      businessErrors: { ...step.businessErrors },
      ...(step.compensation ? { compensation: { name: step.compensation.name, call: callData(step.compensation.call) } } : {}),
      ...(step.result ? { result: { ...step.result } } : {}),
      ...(step.unavailableCode ? { unavailableCode: step.unavailableCode } : {}),
    })),
  };
}

function callData(call: StepCall): StepCall {
  return call.kind === 'http'
    ? { kind: 'http', method: call.method, path: call.path, ...(call.body ? { body: { ...call.body } } : {}) }
    : { kind: 'activity', activity: call.activity, ...(call.input ? { input: { ...call.input } } : {}) };
}

/** The services and activities a program's calls need from the worker that runs them. */
export function programNeeds(program: Pick<OperationProgram, 'steps'>): ProgramNeeds {
  const services = new Set<string>();
  const activities = new Set<string>();
  for (const step of program.steps) {
    for (const call of [step.call, step.compensation?.call]) {
      if (call?.kind === 'http') services.add(step.service);
      if (call?.kind === 'activity') activities.add(call.activity);
    }
  }
  return { services: [...services].sort(), activities: [...activities].sort() };
}

const STEP_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const KEY_SUFFIX = /^[a-z][a-z0-9_-]{0,31}$/;
const SERVICE = /^[a-z][a-z0-9_-]{0,39}$/;
const ACTIVITY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const CODE = /^[a-z][a-z0-9_]{0,63}$/;
/**
 * A path on the service: one leading `/` (two would name another host), then path
 * characters; `{key}` is the only placeholder; no `.`/`..` segments, no query or fragment.
 */
const PATH = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/%{}]*$/;

function pathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || !PATH.test(path)) return 'must be a path starting with one /';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'must not hold . or .. segments';
  if (path.replaceAll('{key}', '').includes('{') || path.replaceAll('{key}', '').includes('}')) return 'may only hold {key}';
  return undefined;
}

/** What is wrong with a declared call as an activity receives it (method, path, a body object), or nothing. */
export function declaredCallProblem(call: { method?: unknown; path?: unknown; body?: unknown }): string | undefined {
  if (typeof call.method !== 'string' || !HTTP_METHODS.includes(call.method))
    return `method must be one of ${HTTP_METHODS.join(', ')}`;
  const path = pathProblem(call.path);
  if (path) return `path ${JSON.stringify(call.path)} ${path}`;
  if (call.body !== undefined && !isRecord(call.body)) return 'its body must be a JSON object';
  return undefined;
}

function fieldMapProblem(map: unknown): string | undefined {
  if (map === undefined) return undefined;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) return 'must be a field map';
  for (const [field, source] of Object.entries(map)) {
    if (field === '' || field === '__proto__') return `has an invalid field name ${JSON.stringify(field)}`;
    if (typeof source === 'string' && source !== '') continue;
    if (isRecord(source) && typeof source.setting === 'string' && Object.keys(source).length === 1) continue;
    if (isRecord(source) && 'value' in source && Object.keys(source).length === 1) continue;
    return `field ${field} must name a request field, { setting } or { value }`;
  }
  return undefined;
}

function callProblem(call: unknown, where: string, settings: Readonly<Record<string, number>>): string | undefined {
  if (!isRecord(call)) return `${where}: its call must be an object`;
  if (call.kind === 'http') {
    if (typeof call.method !== 'string' || !HTTP_METHODS.includes(call.method))
      return `${where}: method must be one of ${HTTP_METHODS.join(', ')}`;
    const path = pathProblem(call.path);
    if (path) return `${where}: path ${JSON.stringify(call.path)} ${path}`;
    const body = fieldMapProblem(call.body);
    if (body) return `${where}: body ${body}`;
    return settingProblem(call.body as FieldMap | undefined, where, settings);
  }
  if (call.kind === 'activity') {
    if (typeof call.activity !== 'string' || !ACTIVITY.test(call.activity))
      return `${where}: activity must match ${ACTIVITY.source}`;
    const input = fieldMapProblem(call.input);
    if (input) return `${where}: input ${input}`;
    return settingProblem(call.input as FieldMap | undefined, where, settings);
  }
  return `${where}: call kind must be http or activity`;
}

function settingProblem(
  map: FieldMap | undefined,
  where: string,
  settings: Readonly<Record<string, number>>,
): string | undefined {
  for (const source of Object.values(map ?? {})) {
    if (typeof source === 'object' && 'setting' in source && !Object.hasOwn(settings, source.setting)) {
      return `${where}: reads the setting ${source.setting}, which the program does not hold`;
    }
  }
  return undefined;
}

/**
 * What is wrong with a program, or nothing. The worker treats a recorded program as input,
 * not as trust: one with a problem runs no step. The same rules check a definition at load.
 */
export function programProblems(program: unknown): string[] {
  if (!isRecord(program)) return ['the program is not an object'];
  const { type, unavailableCode, steps } = program;
  const settings = isRecord(program.settings) ? (program.settings as Record<string, number>) : undefined;
  if (typeof type !== 'string' || type === '') return ['the program names no type'];
  if (typeof unavailableCode !== 'string' || !CODE.test(unavailableCode)) return ['its unavailableCode must be snake case'];
  if (!settings || !Object.values(settings).every((v) => typeof v === 'number')) return ['its settings must be numbers'];
  if (!Array.isArray(steps) || steps.length === 0) return ['it needs at least one step'];
  const names = new Set<string>();
  const problems: string[] = [];
  for (const step of steps as unknown[]) {
    if (!isRecord(step) || typeof step.name !== 'string') {
      problems.push('a step has no name');
      continue;
    }
    const compensation = isRecord(step.compensation) ? step.compensation : undefined;
    for (const name of [step.name, compensation?.name]) {
      if (name === undefined) continue;
      if (typeof name !== 'string' || !STEP_NAME.test(name))
        problems.push(`step or compensation name ${JSON.stringify(name)} must be snake case`);
      else if (names.has(name)) problems.push(`${name} is named twice`);
      else names.add(name);
    }
    if (typeof step.keySuffix !== 'string' || !KEY_SUFFIX.test(step.keySuffix))
      problems.push(`${step.name}: key suffix must match ${KEY_SUFFIX.source}`);
    if (typeof step.service !== 'string' || !SERVICE.test(step.service))
      problems.push(`${step.name}: service must match ${SERVICE.source}`);
    if (!isStringMap(step.businessErrors)) problems.push(`${step.name}: businessErrors must map codes to codes`);
    if (step.result !== undefined && !isStringMap(step.result))
      problems.push(`${step.name}: result must map fields to answer fields`);
    const call = callProblem(step.call, step.name, settings);
    if (call) problems.push(call);
    if (step.compensation !== undefined) {
      const undo = compensation
        ? callProblem(compensation.call, String(compensation.name), settings)
        : `${step.name}: compensation must be an object`;
      if (undo) problems.push(undo);
    }
  }
  // An activity type is the name it is scheduled as: a step's own name must not also be a hand-written activity's.
  for (const step of (steps as unknown[]).filter(isRecord) as unknown as ProgramStep[]) {
    for (const call of [step.call, step.compensation?.call]) {
      if (call?.kind === 'activity' && names.has(call.activity))
        problems.push(`activity ${call.activity} has the name of a step`);
    }
  }
  return problems;
}

/** The value of a call's body or an activity's input: each field from the request, a setting or a constant. */
export function fieldsOf(map: FieldMap, request: Readonly<Record<string, unknown>>, settings: Readonly<Record<string, number>>) {
  const fields: Record<string, unknown> = {};
  for (const [field, source] of Object.entries(map)) {
    fields[field] = typeof source === 'string' ? request[source] : 'setting' in source ? settings[source.setting] : source.value;
  }
  return fields;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringMap(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}
