// The seeded plan of a chaos run: which logical operations are sent when (and how their
// clients retry), and the schedule of faults. Everything here derives from the seed and
// the options only, so the same seed gives the same plan and the same hash; what happens
// at run time (timings, retries after a 503) varies, the plan does not.
import { createHash } from 'node:crypto';
import type { FaultsPatch } from '../downstream/shared/faults.js';
import { createRng, type Rng } from './prng.js';

/** Settings of the chaos stack: short deadlines so fences and NeedsAttention happen within a run. */
export const CHAOS_TIMINGS = {
  /** RETRYSAFE_STEP_DEADLINE: reconciliation deadline of each step. */
  stepDeadlineMs: 8_000,
  /** RETRYSAFE_ATTENTION_AFTER: a compensation failing this long marks NeedsAttention. */
  attentionAfterMs: 5_000,
  /** DOWNSTREAM_TIMEOUT of the workers: an injected delay longer than this loses the answer. */
  downstreamTimeoutMs: 2_000,
} as const;

/** Ledger set-up: generous accounts and stock so most operations succeed, and some that cannot. */
export const LEDGER = {
  accounts: [
    { id: 'acc_chaos_1', balance: 1_000_000_000 },
    { id: 'acc_chaos_2', balance: 1_000_000_000 },
    { id: 'acc_chaos_3', balance: 1_000_000_000 },
    /** Enough for a few operations only: later ones fail with insufficient_funds, whichever wins. */
    { id: 'acc_chaos_tight', balance: 30_000 },
    /** Can pay nothing the plan asks of it: designed to fail. */
    { id: 'acc_chaos_poor', balance: 50 },
  ],
  stock: [
    { sku: 'sku_chaos_a', available: 1_000_000 },
    { sku: 'sku_chaos_b', available: 1_000_000 },
    { sku: 'sku_chaos_c', available: 1_000_000 },
    /** A few units: later checkouts fail with out_of_stock. */
    { sku: 'sku_chaos_scarce', available: 12 },
    /** None at all: designed to fail. */
    { sku: 'sku_chaos_soldout', available: 0 },
  ],
} as const;

const NORMAL_ACCOUNTS = ['acc_chaos_1', 'acc_chaos_2', 'acc_chaos_3'] as const;
const NORMAL_SKUS = ['sku_chaos_a', 'sku_chaos_b', 'sku_chaos_c'] as const;

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
  type: 'payment' | 'checkout';
  profile: OpProfile;
  /** The failure codes a doomed operation may end with. */
  expectedFailure?: string[];
  body: { account: string; amount: number; currency: string; items?: Array<{ sku: string; quantity: number }> };
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
  /** Seed of the op's run-time choices (waits, instances, back-off jitter). */
  clientSeed: number;
}

export type SandboxFaultKind = 'drop' | 'fail' | 'delay' | 'down' | 'crash';
export type Service = 'bank' | 'reservations';

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

export interface ChaosPlan {
  seed: number;
  topology: Topology;
  durationMs: number;
  ops: PlannedOp[];
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

export function buildPlan(opts: PlanOptions): ChaosPlan {
  const root = createRng(opts.seed);
  const ops = planOperations(root.fork('operations'), opts);
  const sandboxFaults = (['bank', 'reservations'] as const).flatMap((service) =>
    planSandboxFaults(root.fork(`faults:${service}`), service, opts.durationMs),
  );
  sandboxFaults.sort((a, b) => a.atMs - b.atMs || a.service.localeCompare(b.service));
  const processFaults = planProcessFaults(root.fork(`processes:${opts.topology}`), opts.durationMs, opts.topology);
  const body = {
    version: 2,
    seed: opts.seed,
    topology: opts.topology,
    durationMs: opts.durationMs,
    timings: CHAOS_TIMINGS,
    ledger: LEDGER,
    ops,
    sandboxFaults,
    processFaults,
  };
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  return { seed: opts.seed, topology: opts.topology, durationMs: opts.durationMs, ops, sandboxFaults, processFaults, hash };
}

function planOperations(rng: Rng, opts: PlanOptions): PlannedOp[] {
  // Arrivals spread over the first 95% of the run, so the last ones still meet faults.
  const span = opts.durationMs * 0.95;
  const times = Array.from({ length: opts.ops }, () => Math.floor(rng.next() * span)).sort((a, b) => a - b);
  const width = String(opts.ops - 1).length;
  return times.map((atMs, index) => {
    const type = rng.chance(0.5) ? 'payment' : 'checkout';
    const profile = rng.weighted<OpProfile>([
      ['normal', 80],
      ['tight', 8],
      ['doomed', 12],
    ]);
    const amount = rng.int(100, 9_999);
    const op: PlannedOp = {
      index,
      key: `chaos-s${opts.seed}-${String(index).padStart(width, '0')}`,
      type,
      profile,
      body: { account: rng.pick(NORMAL_ACCOUNTS), amount, currency: 'EUR' },
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
    if (rng.chance(0.15)) op.changedAmount = { afterMs: rng.int(0, 5_000), delta: rng.int(1, 500) };
    if (type === 'checkout') {
      const skus = rng.shuffle(NORMAL_SKUS).slice(0, rng.int(1, 2));
      op.body.items = skus.map((sku) => ({ sku, quantity: rng.int(1, 3) }));
    }
    if (profile === 'tight') {
      if (type === 'payment' || rng.chance(0.5)) {
        op.body.account = 'acc_chaos_tight';
        op.body.amount = rng.int(2_000, 6_000);
      } else {
        op.body.items = [{ sku: 'sku_chaos_scarce', quantity: rng.int(1, 3) }];
      }
    } else if (profile === 'doomed') {
      if (type === 'payment' || rng.chance(0.5)) {
        // The charge is declined; in a checkout the hold is then released.
        op.body.account = 'acc_chaos_poor';
        op.body.amount = rng.int(1_000, 5_000);
        op.expectedFailure = ['insufficient_funds', 'payment_unavailable', 'inventory_unavailable'];
      } else {
        op.body.items = [{ sku: 'sku_chaos_soldout', quantity: rng.int(1, 2) }];
        op.expectedFailure = ['out_of_stock', 'inventory_unavailable'];
      }
    }
    return op;
  });
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
