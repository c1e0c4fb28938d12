// The seeded plan of a chaos run: which logical operations are sent when (and how their
// clients retry), a flood of one tenant's new operations, and the schedule of faults.
// Everything here derives from the seed, the options and the catalog of operations only,
// so the same seed gives the same plan and the same hash; what happens at run time
// (timings, retries after a 503) varies, the plan does not.
//
// Operations are drawn from the catalog, every type alike; their request bodies are
// filled from each definition's request schema with the sandboxes' vocabulary
// (vocabulary.ts), so a definition added to the catalog joins the mix by itself.
import { createHash } from 'node:crypto';
import { builtInCatalog, type DefinitionCatalog } from '../../workflows/catalog.js';
import {
  planProcessFaults,
  planSandboxFaults,
  type ProcessFault,
  type SandboxFaultWindow,
  type Topology,
} from './fault-schedule.js';
import { createRng, type Rng } from './prng.js';
import { failureCodes, fingerprintsAmount, fits, requestFor } from './request-bodies.js';
import { CHAOS_TIMINGS, DEFAULT_OPS_PER_SECOND, FLOOD, TENANTS } from './settings.js';
import { DOOMED_SPOILS, LEDGER, TIGHT_SPOILS } from './vocabulary.js';

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
  /** The operation type: a definition of the catalog. */
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

/** How many operations of each type of the catalog a list holds (every type named, zeros too). */
export function countByType(ops: readonly PlannedOp[], catalog: DefinitionCatalog = builtInCatalog): Record<string, number> {
  const counts = Object.fromEntries(catalog.types.map((t) => [t, 0]));
  for (const op of ops) counts[op.type] = (counts[op.type] ?? 0) + 1;
  return counts;
}

export function buildPlan(opts: PlanOptions, catalog: DefinitionCatalog = builtInCatalog): ChaosPlan {
  const root = createRng(opts.seed);
  const ops = planOperations(root.fork('operations'), opts, catalog);
  const flood = planFlood(root.fork('flood'), opts, catalog);
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

function planOperations(rng: Rng, opts: PlanOptions, catalog: DefinitionCatalog): PlannedOp[] {
  // Arrivals spread over the first 95% of the run, so the last ones still meet faults.
  const span = opts.durationMs * 0.95;
  const times = Array.from({ length: opts.ops }, () => Math.floor(rng.next() * span)).sort((a, b) => a - b);
  const width = keyWidth(opts.ops);
  return times.map((atMs, index) => {
    const definition = rng.pick(catalog.all);
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
function planFlood(rng: Rng, opts: PlanOptions, catalog: DefinitionCatalog): FloodPlan {
  const atMs = rng.int(Math.round(opts.durationMs * 0.3), Math.round(opts.durationMs * 0.5));
  const count = FLOOD.size;
  const width = keyWidth(count);
  const ops = Array.from({ length: count }, (_, index): PlannedOp => {
    const definition = rng.pick(catalog.all);
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
