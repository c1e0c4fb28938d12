// The seeded plan of a chaos run: which logical operations are sent when (and how their
// clients retry), a flood of one tenant's new operations, and the schedule of faults.
// Everything here derives from the seed, the options and the registry of operations only,
// so the same seed gives the same plan and the same hash; what happens at run time
// (timings, retries after a 503) varies, the plan does not.
//
// Operations are drawn from the registry, every type alike; their request bodies are
// filled from each definition's request schema with the sandboxes' vocabulary
// (vocabulary.ts), so a definition added to the registry joins the mix by itself.
import { createHash } from 'node:crypto';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { FaultsPatch } from '../../downstream/shared/faults.js';
import type { OperationDefinition } from '../../workflows/definition.js';
import { builtInRegistry, type OperationRegistry } from '../../workflows/registry.js';
import { createRng, type Rng } from './prng.js';
import {
  AMPLE_ACCOUNTS,
  AMPLE_SKUS,
  DOOMED_SPOILS,
  FIELDS,
  LEDGER,
  roleOf,
  TIGHT_SPOILS,
  type Item,
  type Service,
  type Spoil,
} from './vocabulary.js';

/** Settings of the chaos stack: short deadlines so fences and NeedsAttention happen within a run. */
export const CHAOS_TIMINGS = {
  /** RETRYSAFE_STEP_DEADLINE: reconciliation deadline of each step. */
  stepDeadlineMs: 8_000,
  /** RETRYSAFE_ATTENTION_AFTER: a compensation failing this long marks NeedsAttention. */
  attentionAfterMs: 5_000,
  /** DOWNSTREAM_TIMEOUT of the workers: an injected delay longer than this loses the answer. */
  downstreamTimeoutMs: 2_000,
} as const;

/** The run's tenants: the one whose operations carry the plan, and the one that floods. */
export const TENANTS = { main: 'chaos', flood: 'flood' } as const;

/**
 * The flood window: one tenant sends a burst of new operations far past its share, every
 * first request to one API instance at once. That instance lets one tenant hold three
 * quarters of its places (its engine bound): the burst is larger, so part of it is refused
 * 503 engine_busy on arrival; of the requests that find a place, those past the tenant's
 * rate are refused 429. The other tenant is not limited, and the bound is the default, so
 * its share of the engine is what it would be in production.
 */
export const FLOOD = {
  /**
   * RETRYSAFE_TENANT_LIMITS entry of the flooding tenant: what the engine takes from it. At
   * 20/s the burst started more workflows than the dev server on a loaded 2-core machine
   * completes, and the other tenant's retries and the refused requests' lookups kept it
   * there for minutes.
   */
  rate: '5/s',
  /** RETRYSAFE_MAX_IN_FLIGHT of each API instance (the default): one tenant may hold 48. */
  maxInFlight: 64,
  /** The instance every first request of the flood goes to. */
  api: 0,
  /** Flood requests wait for their outcome, holding their place in the bound meanwhile. */
  prefer: 'wait=10',
  /** Every first request of the flood goes out within this: a burst, not a ramp. */
  spreadMs: 200,
  /**
   * Its operations: more than the 48 places one tenant may hold at the instance it floods,
   * whatever the run's length (a burst, not a second load: a larger one only lengthens the
   * time the engine takes to catch up).
   */
  size: 60,
} as const;

/** Ops per second of load when --ops is not given: 5 minutes make about 570 operations. */
export const DEFAULT_OPS_PER_SECOND = 1.9;

export type OpProfile =
  | 'normal'
  /** May fail (insufficient_funds / out_of_stock) depending on who wins the race. */
  | 'tight'
  /** Must fail: the auditor flags one that succeeds. */
  | 'doomed';

export interface PlannedOp {
  index: number;
  key: string;
  tenant: string;
  /** The operation type: a definition of the registry. */
  type: string;
  profile: OpProfile;
  /** The failure codes a doomed operation may end with. */
  expectedFailure?: string[];
  /** The request, valid against the definition's schema. */
  body: Record<string, unknown>;
  /** When the first request goes out, from the start of the load. */
  atMs: number;
  /** How many clients send it at once, each retrying on its own. */
  concurrency: number;
  /** Header form: bare `k` or the Structured Field string `"k"` (the same key). */
  keyForm: 'bare' | 'quoted';
  /** Which API instance the first client starts with; the clients then alternate at random. */
  firstApi: 0 | 1;
  /** Probability that a 202 is followed by GET of its Location rather than a re-POST. */
  getAfter202: number;
  /** Same request again after the outcome is known, each after this many ms. */
  lateReplaysMs: number[];
  /** Re-sent with a changed amount this long after it was accepted (must get 422). */
  changedAmount?: { afterMs: number; delta: number };
  /** The Prefer header of every POST; a seeded mix when absent. */
  prefer?: string;
  /** Part of the flood: never cancelled, nothing sent after its outcome. */
  flood?: boolean;
  /** Seed of the op's run-time choices (waits, instances, back-off jitter). */
  clientSeed: number;
}

export type SandboxFaultKind = 'drop' | 'fail' | 'delay' | 'down' | 'crash';

export interface SandboxFaultWindow {
  kind: 'sandbox';
  service: Service;
  fault: SandboxFaultKind;
  atMs: number;
  untilMs: number;
  /** What `PUT /_faults` sets on the sandbox while the window lasts. */
  faults: FaultsPatch;
}

/**
 * Where the run's Temporal lives: the embedded dev server on a SQLite file (what `npm start`
 * runs), or the multi-process cluster on PostgreSQL (what `npm run cluster` runs).
 */
export type Topology = 'embedded' | 'cluster';

/**
 * A process fault. `*_kill` is SIGKILL: no shutdown code runs, whatever was in flight is cut
 * where it stood. Those with `restartAfterMs` are started again by the schedule after that
 * pause; the others are brought back by the supervisor (its restart after a crash).
 * `afterRequestMs`: the kill waits for the next request the process receives, then this
 * long, so that it lands with a request in flight.
 */
export type ProcessFault =
  | { kind: 'worker_kill'; atMs: number; worker: 0 | 1; restartAfterMs: number }
  | { kind: 'api_restart'; atMs: number; api: 0 | 1 }
  | { kind: 'api_kill'; atMs: number; api: 0 | 1; afterRequestMs: number }
  | { kind: 'bank_kill'; atMs: number; afterRequestMs: number }
  | { kind: 'reservations_kill'; atMs: number; afterRequestMs: number }
  /** Embedded: the dev server stopped (SIGTERM) and started again on the same file. */
  | { kind: 'temporal_restart'; atMs: number; downMs: number }
  /** Embedded: the dev server killed outright; the supervisor restarts it on the same file. */
  | { kind: 'temporal_kill'; atMs: number }
  /** Cluster: one history process killed outright; the other takes its shards until it is back. */
  | { kind: 'history_kill'; atMs: number; history: 0 | 1; restartAfterMs: number }
  /** Cluster: the frontend killed outright; the supervisor restarts it. */
  | { kind: 'frontend_kill'; atMs: number }
  /**
   * Cluster: PostgreSQL stopped and started again after `downMs`: `fast` is its clean
   * shutdown (SIGINT), `immediate` (SIGQUIT) skips the checkpoint, so the next start replays
   * its write-ahead log as after a crash.
   */
  | { kind: 'postgres_restart'; atMs: number; downMs: number; mode: 'fast' | 'immediate' };

export type ProcessFaultKind = ProcessFault['kind'];

/**
 * Process faults per minute of run, by topology; each kind at least once per run. The
 * order of the list is the order of the report's rows.
 */
export const PROCESS_FAULT_RATES: Record<Topology, ReadonlyArray<readonly [ProcessFaultKind, number]>> = {
  embedded: [
    ['worker_kill', 0.8],
    ['api_kill', 0.4],
    ['api_restart', 0.4],
    ['bank_kill', 0.4],
    ['reservations_kill', 0.4],
    ['temporal_kill', 0.4],
    ['temporal_restart', 0.4],
  ],
  cluster: [
    ['worker_kill', 0.8],
    ['api_kill', 0.4],
    ['api_restart', 0.4],
    ['bank_kill', 0.4],
    ['reservations_kill', 0.4],
    ['history_kill', 0.6],
    ['frontend_kill', 0.4],
    ['postgres_restart', 0.4],
  ],
};

export interface FloodPlan {
  tenant: string;
  /** When its first requests go out, from the start of the load. */
  atMs: number;
  ops: PlannedOp[];
}

export interface ChaosPlan {
  seed: number;
  topology: Topology;
  durationMs: number;
  /** The operations of the main tenant. */
  ops: PlannedOp[];
  flood: FloodPlan;
  sandboxFaults: SandboxFaultWindow[];
  processFaults: ProcessFault[];
  /** SHA-256 of the plan: two runs with the same hash ran the same schedule. */
  hash: string;
}

export interface PlanOptions {
  seed: number;
  durationMs: number;
  ops: number;
  topology: Topology;
}

export function defaultOps(durationMs: number): number {
  return Math.max(10, Math.round((durationMs / 1000) * DEFAULT_OPS_PER_SECOND));
}

/** Every operation of the plan: the main tenant's, then the flood's. */
export function allOps(plan: Pick<ChaosPlan, 'ops' | 'flood'>): PlannedOp[] {
  return [...plan.ops, ...plan.flood.ops];
}

/** How many operations of each type of the registry a list holds (every type named, zeros too). */
export function countByType(ops: readonly PlannedOp[], registry: OperationRegistry = builtInRegistry): Record<string, number> {
  const counts = Object.fromEntries(registry.types.map((t) => [t, 0]));
  for (const op of ops) counts[op.type] = (counts[op.type] ?? 0) + 1;
  return counts;
}

export function buildPlan(opts: PlanOptions, registry: OperationRegistry = builtInRegistry): ChaosPlan {
  const root = createRng(opts.seed);
  const ops = planOperations(root.fork('operations'), opts, registry);
  const flood = planFlood(root.fork('flood'), opts, registry);
  const sandboxFaults = (['bank', 'reservations'] as const).flatMap((service) =>
    planSandboxFaults(root.fork(`faults:${service}`), service, opts.durationMs),
  );
  sandboxFaults.sort((a, b) => a.atMs - b.atMs || a.service.localeCompare(b.service));
  const processFaults = planProcessFaults(root.fork(`processes:${opts.topology}`), opts.durationMs, opts.topology);
  const body = {
    version: 3,
    seed: opts.seed,
    topology: opts.topology,
    durationMs: opts.durationMs,
    timings: CHAOS_TIMINGS,
    ledger: LEDGER,
    tenants: TENANTS,
    floodSettings: FLOOD,
    ops,
    flood,
    sandboxFaults,
    processFaults,
  };
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  return {
    seed: opts.seed,
    topology: opts.topology,
    durationMs: opts.durationMs,
    ops,
    flood,
    sandboxFaults,
    processFaults,
    hash,
  };
}

function keyWidth(count: number): number {
  return String(Math.max(0, count - 1)).length;
}

function planOperations(rng: Rng, opts: PlanOptions, registry: OperationRegistry): PlannedOp[] {
  // Arrivals spread over the first 95% of the run, so the last ones still meet faults.
  const span = opts.durationMs * 0.95;
  const times = Array.from({ length: opts.ops }, () => Math.floor(rng.next() * span)).sort((a, b) => a - b);
  const width = keyWidth(opts.ops);
  return times.map((atMs, index) => {
    const definition = rng.pick(registry.all);
    const wanted = rng.weighted<OpProfile>([
      ['normal', 80],
      ['tight', 8],
      ['doomed', 12],
    ]);
    const candidates =
      wanted === 'normal' ? [] : (wanted === 'tight' ? TIGHT_SPOILS : DOOMED_SPOILS).filter((s) => fits(definition, s));
    // A definition with no field a spoil fits (no account, no SKU) can only be planned to succeed.
    const spoil = candidates.length > 0 ? rng.pick(candidates) : undefined;
    const profile: OpProfile = spoil ? wanted : 'normal';
    const op: PlannedOp = {
      index,
      key: `chaos-s${opts.seed}-${String(index).padStart(width, '0')}`,
      tenant: TENANTS.main,
      type: definition.type,
      profile,
      body: requestFor(rng, definition, spoil),
      atMs,
      concurrency: rng.weighted([
        [1, 55],
        [2, 25],
        [3, 15],
        [4, 5],
      ]),
      keyForm: rng.chance(0.5) ? 'bare' : 'quoted',
      firstApi: rng.chance(0.5) ? 0 : 1,
      getAfter202: rng.pick([0, 0.3, 0.7]),
      lateReplaysMs: Array.from(
        {
          length: rng.weighted([
            [0, 45],
            [1, 35],
            [2, 20],
          ]),
        },
        () => rng.int(100, 8_000),
      ),
      clientSeed: rng.int(0, 2 ** 31),
    };
    if (profile === 'doomed' && spoil?.refusal) op.expectedFailure = failureCodes(definition, spoil.refusal);
    if (rng.chance(0.15) && fingerprintsAmount(definition))
      op.changedAmount = { afterMs: rng.int(0, 5_000), delta: rng.int(1, 500) };
    return op;
  });
}

/**
 * The flood: within the fault phase, one tenant sends many new operations at once, each
 * by one client that retries a 429 or a 503 after Retry-After with the same key.
 */
function planFlood(rng: Rng, opts: PlanOptions, registry: OperationRegistry): FloodPlan {
  const atMs = rng.int(Math.round(opts.durationMs * 0.3), Math.round(opts.durationMs * 0.5));
  const count = FLOOD.size;
  const width = keyWidth(count);
  const ops = Array.from({ length: count }, (_, index): PlannedOp => {
    const definition = rng.pick(registry.all);
    return {
      index,
      key: `flood-s${opts.seed}-${String(index).padStart(width, '0')}`,
      tenant: TENANTS.flood,
      type: definition.type,
      profile: 'normal',
      body: requestFor(rng, definition, undefined),
      atMs: atMs + rng.int(0, FLOOD.spreadMs),
      concurrency: 1,
      keyForm: 'bare',
      firstApi: FLOOD.api,
      getAfter202: 0,
      lateReplaysMs: [],
      prefer: FLOOD.prefer,
      flood: true,
      clientSeed: rng.int(0, 2 ** 31),
    };
  });
  return { tenant: TENANTS.flood, atMs, ops };
}

type Properties = Record<string, TSchema & { type?: string; items?: TSchema; properties?: Properties; required?: string[] }>;

/** The item schema of an array field whose objects name a SKU, if the field is one. */
function itemSchemaOf(schema: Properties[string]): (TSchema & { properties: Properties; required?: string[] }) | undefined {
  const items = schema.items as (TSchema & { properties?: Properties; required?: string[] }) | undefined;
  if (schema.type !== 'array' || !items?.properties || !(FIELDS.sku in items.properties)) return undefined;
  return items as TSchema & { properties: Properties; required?: string[] };
}

function propertiesOf(definition: OperationDefinition): Properties {
  return definition.request.properties as unknown as Properties;
}

/** Whether a spoil has a field to go in: a payer, a payee, or items. */
function fits(definition: OperationDefinition, spoil: Spoil): boolean {
  const required = new Set(definition.request.required ?? []);
  return Object.entries(propertiesOf(definition)).some(([field, schema]) => {
    if (!required.has(field)) return false;
    if (spoil.role === 'sku') return itemSchemaOf(schema) !== undefined;
    return roleOf(field) === spoil.role;
  });
}

function fingerprintsAmount(definition: OperationDefinition): boolean {
  const fields = definition.fingerprint ?? Object.keys(propertiesOf(definition));
  return (fields as readonly string[]).includes(FIELDS.amount) && FIELDS.amount in propertiesOf(definition);
}

/**
 * A request body for the definition, every required field filled by what its name means
 * to the sandboxes; optional ones (a description) are left out. Payers are drawn first so
 * that a payee is another account. Checked against the schema and the definition's own
 * rules: a body the API would refuse is a bug of the plan, not a finding of the run.
 */
function requestFor(rng: Rng, definition: OperationDefinition, spoil: Spoil | undefined): Record<string, unknown> {
  const required = new Set(definition.request.required ?? []);
  const fields = Object.entries(propertiesOf(definition)).filter(([field]) => required.has(field));
  const rank = (field: string) => (roleOf(field) === 'payer' ? 0 : 1);
  fields.sort(([a], [b]) => rank(a) - rank(b));
  const body: Record<string, unknown> = {};
  const payers: string[] = [];
  const unknown = (field: string) =>
    new Error(`chaos: cannot fill ${definition.type}.${field}: the sandboxes' vocabulary has no such field`);
  for (const [field, schema] of fields) {
    switch (roleOf(field)) {
      case 'payer': {
        const account = spoil?.role === 'payer' ? spoil.value : rng.pick(AMPLE_ACCOUNTS);
        payers.push(account);
        body[field] = account;
        break;
      }
      case 'payee':
        body[field] = spoil?.role === 'payee' ? spoil.value : rng.pick(AMPLE_ACCOUNTS.filter((a) => !payers.includes(a)));
        break;
      case 'amount':
        body[field] = spoil?.amount ? rng.int(...spoil.amount) : rng.int(100, 9_999);
        break;
      case 'currency':
        body[field] = LEDGER.currency;
        break;
      default: {
        const item = itemSchemaOf(schema);
        if (!item) throw unknown(field);
        for (const inner of item.required ?? []) {
          if (inner !== FIELDS.sku && inner !== FIELDS.quantity) throw unknown(`${field}[].${inner}`);
        }
        const items: Item[] =
          spoil?.role === 'sku'
            ? [{ sku: spoil.value, quantity: rng.int(...(spoil.quantity ?? [1, 1])) }]
            : rng
                .shuffle(AMPLE_SKUS)
                .slice(0, rng.int(1, 2))
                .map((sku) => ({ sku, quantity: rng.int(1, 3) }));
        body[field] = items;
      }
    }
  }
  const refused = [
    ...[...Value.Errors(definition.request, body)].map((e) => `${e.instancePath || '/'} ${e.message}`),
    ...(definition.check?.(body as never) ?? []).map((e) => `${e.field} ${e.message}`),
  ];
  if (refused.length > 0)
    throw new Error(`chaos: the planned ${definition.type} ${JSON.stringify(body)} is invalid: ${refused.join('; ')}`);
  return body;
}

/**
 * The codes an operation meeting `refusal` downstream may fail with: what its steps map
 * that refusal to, or the code of a step fenced on the way there (any step up to the last
 * one that can meet it; which of them does depends on the values).
 */
function failureCodes(definition: OperationDefinition, refusal: string): string[] {
  const codes = new Set<string>();
  let last = -1;
  definition.steps.forEach((step, i) => {
    const code = step.businessErrors[refusal];
    if (code === undefined) return;
    codes.add(code);
    last = i;
  });
  for (const step of definition.steps.slice(0, last + 1)) codes.add(step.unavailableCode ?? definition.unavailableCode);
  return [...codes];
}

/**
 * One track per sandbox of non-overlapping windows. The first four windows are the four
 * kinds in a seeded order, so a one-minute run meets each of them; then a seeded mix.
 */
function planSandboxFaults(rng: Rng, service: Service, durationMs: number): SandboxFaultWindow[] {
  const { stepDeadlineMs, attentionAfterMs, downstreamTimeoutMs } = CHAOS_TIMINGS;
  const windows: SandboxFaultWindow[] = [];
  const firstRound = rng.shuffle<SandboxFaultKind>(['drop', 'fail', 'delay', 'down', 'crash']);
  let t = rng.int(1_000, 3_000);
  for (let i = 0; ; i++) {
    const fault =
      firstRound[i] ??
      rng.weighted<SandboxFaultKind>([
        ['drop', 5],
        ['fail', 2],
        ['delay', 2],
        ['down', 1.5],
        ['crash', 1.5],
      ]);
    let length: number;
    let faults: SandboxFaultWindow['faults'];
    switch (fault) {
      case 'drop':
        length = rng.int(6_000, 12_000);
        faults = { dropResponseAfterCommit: rng.pick([0.3, 0.5, 0.7]) };
        break;
      case 'fail':
        length = rng.int(4_000, 8_000);
        faults = { failBeforeCommit: rng.pick([0.2, 0.35, 0.5]) };
        break;
      case 'delay':
        // Past the worker's downstream timeout: the call times out, the effect still commits.
        length = rng.int(4_000, 8_000);
        faults = { delayMs: downstreamTimeoutMs + rng.int(500, 2_000) };
        break;
      case 'crash':
        // The service dies by SIGKILL right after a commit, before answering; the stack's
        // supervisor starts it again (with no faults), so a window is usually one crash.
        length = rng.int(3_000, 6_000);
        faults = { crashAfterCommit: rng.pick([0.5, 1]) };
        break;
      case 'down':
        // Longer than a step deadline plus the attention delay: steps are fenced, and the
        // compensations that fence them fail long enough to raise NeedsAttention.
        length = stepDeadlineMs + attentionAfterMs + rng.int(2_000, 5_000);
        faults = { down: true };
        break;
    }
    if (t + length > durationMs - 1_000) break;
    windows.push({ kind: 'sandbox', service, fault, atMs: t, untilMs: t + length, faults });
    t += length + rng.int(1_000, 4_000);
  }
  return windows;
}

/**
 * Process faults, spread evenly (with jitter) over the run in a seeded order: one slot each,
 * so that two rarely overlap (a fault on a process still coming back from the previous one
 * waits for it).
 */
function planProcessFaults(rng: Rng, durationMs: number, topology: Topology): ProcessFault[] {
  const minutes = durationMs / 60_000;
  const kinds = PROCESS_FAULT_RATES[topology].flatMap(([kind, perMinute]) =>
    Array<ProcessFaultKind>(Math.max(1, Math.floor(minutes * perMinute))).fill(kind),
  );
  const order = rng.shuffle(kinds);
  const start = 5_000;
  const end = Math.max(start + 1_000, durationMs - 12_000);
  const slot = (end - start) / order.length;
  return order.map((kind, i): ProcessFault => {
    const atMs = Math.round(start + slot * i + slot * (0.1 + 0.5 * rng.next()));
    switch (kind) {
      case 'worker_kill':
        return { kind, atMs, worker: rng.chance(0.5) ? 0 : 1, restartAfterMs: rng.int(500, 4_000) };
      case 'api_restart':
        return { kind, atMs, api: rng.chance(0.5) ? 0 : 1 };
      case 'api_kill':
        return { kind, atMs, api: rng.chance(0.5) ? 0 : 1, afterRequestMs: rng.int(0, 50) };
      case 'bank_kill':
      case 'reservations_kill':
        // A sandbox answers in a few milliseconds: a kill within that lands mid-request.
        return { kind, atMs, afterRequestMs: rng.int(0, 5) };
      case 'temporal_restart':
        return { kind, atMs, downMs: rng.int(3_000, 7_000) };
      case 'temporal_kill':
      case 'frontend_kill':
        return { kind, atMs };
      case 'history_kill':
        // Sometimes back before membership notices (~5 s), sometimes after its shards moved.
        return { kind, atMs, history: rng.chance(0.5) ? 0 : 1, restartAfterMs: rng.int(500, 10_000) };
      case 'postgres_restart':
        return { kind, atMs, downMs: rng.int(1_000, 5_000), mode: rng.chance(0.5) ? 'fast' : 'immediate' };
    }
  });
}
