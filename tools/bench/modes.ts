// Command-line flags and the three sizes of a run. Every count is fixed (no "run for N
// seconds"), so a run is bounded and two runs of one mode do the same work.
import { parseArgs } from 'node:util';

export type ModeName = 'default' | 'quick' | 'smoke';

export interface Mode {
  name: ModeName;
  concurrencies: number[];
  /** Rounds per concurrency; the order of the scenarios alternates between rounds (ABBA). */
  rounds: number;
  /** New operations (or bare workflows) per kind, concurrency and round. */
  ops(concurrency: number): number;
  warmupOps: number;
  /** Replays (and plain-endpoint requests) per concurrency and round. */
  replays(concurrency: number): number;
  /** Replays through a second API without its cache, per concurrency and round (0: no such API). */
  uncachedReplays(concurrency: number): number;
  contentionRequests: number;
  contentionTrials: number;
  /** Executions per kind described for state transitions and history size. */
  transitionSample: number;
  /** Time worker/main.ts from spawn to ready (bundle at start-up), this many times. */
  startupRuns: number;
  /** A batch starts no new operation after this long (the count is the other bound). */
  batchMaxMs: number;
  /** The same bound for replay and plain-endpoint batches. */
  replayBatchMaxMs: number;
  /** Also start the retrysafe workflows with a Temporal client, without the API (decomposition). */
  direct: boolean;
  /**
   * Checkouts per peer batch (--peers): a peer's checkout takes a fraction of retrysafe's,
   * so a batch of the same count would be over before its rate could be read.
   */
  peerOps(concurrency: number): number;
  /** Replays of finished checkouts per concurrency and round, retrysafe's and each peer's. */
  checkoutReplays(concurrency: number): number;
  /** Histories read per kind for "where the time goes". */
  timelineSample: number;
  /** Whether the ablation runs without --ablation. */
  ablationByDefault: boolean;
  ablation: AblationCounts;
  /** Whether the overload section runs after the rest without --overload (which runs it alone). */
  overloadByDefault: boolean;
  overload: OverloadCounts;
  /**
   * Time budget of each phase, from its start: no new-operation batch starts after
   * `newOpsMs`, no replay batch after `replaysMs`, no contention trial beyond the first
   * after `contentionMs`. A slow (busy) machine gets a shorter report, not a longer run.
   */
  budget: { newOpsMs: number; replaysMs: number; contentionMs: number };
  /** The run without the ablation and the peers is aborted past this (it never should be). */
  hardLimitMs: number;
}

/**
 * The overload section's counts, per configuration (a fresh engine each): tenant B alone
 * and at c=32, then per flood level tenant A at that concurrency while B runs its count.
 */
export interface OverloadCounts {
  warmupOps: number;
  /** B's operations alone, one at a time. */
  idleOps: number;
  /** B's operations at c=32: the engine's throughput, which A's goodput is compared with. */
  referenceOps: number;
  /** A's concurrency in each flood. */
  floods: number[];
  /** B's operations, one at a time, during each flood. */
  floodOps: number;
  /** A floods this long before B starts. */
  rampMs: number;
  /** No phase of a configuration runs longer. */
  floodMaxMs: number;
  /** No configuration starts after this long from the section's start; the ones left out are listed. */
  budgetMs: number;
  /**
   * Tenant A's rate in the rated configuration, per second; absent: half the engine's
   * measured throughput. The smoke run's flood is too short for a measured rate to be sure
   * to be crossed: a fast engine's half can exceed everything A sends in it.
   */
  tenantRate?: number;
}

/** With the peers, the new-operation phase has more batches (each short): its budget grows by this factor. */
export const PEERS_BUDGET_FACTOR = 1.25;

/** The hard time limit of a run with these options: the mode's, plus the ablation's budget and the peers' start. */
export function hardLimitMs(opts: { mode: Mode; peers: boolean; ablation: boolean; overload: OverloadChoice }): number {
  const { mode } = opts;
  // A configuration that starts just inside the budget may run its floods and audit past it.
  const overload = mode.overload.budgetMs + 3 * 60_000;
  if (opts.overload === 'only') return overload + 60_000;
  return (
    mode.hardLimitMs +
    (opts.peers ? mode.budget.newOpsMs * (PEERS_BUDGET_FACTOR - 1) + 2 * 60_000 : 0) +
    (opts.ablation ? mode.ablation.budgetMs + 2 * 60_000 : 0) +
    (opts.overload === 'also' ? overload : 0)
  );
}

/** The ablation's counts: per row (one server configuration), retrysafe checkouts and bare workflows. */
export interface AblationCounts {
  warmupOps: number;
  opsC1: number;
  opsC32: number;
  batchMaxMs: number;
  /** No row starts after this long from the ablation's start; the rows left out are listed. */
  budgetMs: number;
}

export const MODES: Record<ModeName, Mode> = {
  default: {
    name: 'default',
    concurrencies: [1, 8, 32],
    rounds: 3,
    ops: (c) => (c === 1 ? 60 : c <= 8 ? 160 : 320),
    warmupOps: 8,
    replays: (c) => (c === 1 ? 1000 : 2000),
    uncachedReplays: (c) => (c === 1 ? 100 : 200),
    contentionRequests: 100,
    contentionTrials: 3,
    transitionSample: 20,
    startupRuns: 2,
    batchMaxMs: 6_000,
    replayBatchMaxMs: 3_000,
    direct: true,
    peerOps: (c) => (c === 1 ? 100 : c <= 8 ? 400 : 1000),
    checkoutReplays: (c) => (c === 1 ? 300 : 600),
    timelineSample: 20,
    ablationByDefault: true,
    ablation: { warmupOps: 6, opsC1: 20, opsC32: 96, batchMaxMs: 6_000, budgetMs: 5 * 60_000 },
    overloadByDefault: true,
    overload: {
      warmupOps: 8,
      idleOps: 60,
      referenceOps: 320,
      floods: [200, 400],
      floodOps: 40,
      rampMs: 2_000,
      floodMaxMs: 45_000,
      budgetMs: 8 * 60_000,
    },
    budget: { newOpsMs: 10 * 60_000, replaysMs: 1.5 * 60_000, contentionMs: 60_000 },
    hardLimitMs: 18 * 60_000,
  },
  quick: {
    name: 'quick',
    concurrencies: [1, 8, 32],
    rounds: 1,
    ops: (c) => (c === 1 ? 20 : c <= 8 ? 48 : 96),
    warmupOps: 12,
    replays: (c) => (c === 1 ? 300 : 600),
    uncachedReplays: (c) => (c === 1 ? 30 : 60),
    contentionRequests: 100,
    contentionTrials: 1,
    transitionSample: 8,
    startupRuns: 0,
    batchMaxMs: 3_000,
    replayBatchMaxMs: 1_500,
    direct: false,
    peerOps: (c) => (c === 1 ? 40 : c <= 8 ? 160 : 400),
    checkoutReplays: (c) => (c === 1 ? 100 : 200),
    timelineSample: 8,
    ablationByDefault: false,
    ablation: { warmupOps: 4, opsC1: 8, opsC32: 64, batchMaxMs: 4_000, budgetMs: 3 * 60_000 },
    overloadByDefault: false,
    overload: {
      warmupOps: 4,
      idleOps: 30,
      referenceOps: 128,
      floods: [200],
      floodOps: 30,
      rampMs: 1_500,
      floodMaxMs: 30_000,
      budgetMs: 3 * 60_000,
    },
    budget: { newOpsMs: 150_000, replaysMs: 30_000, contentionMs: 8_000 },
    hardLimitMs: 6 * 60_000,
  },
  smoke: {
    name: 'smoke',
    concurrencies: [1, 4],
    rounds: 1,
    ops: (c) => c,
    warmupOps: 1,
    replays: () => 20,
    uncachedReplays: () => 0,
    contentionRequests: 100,
    contentionTrials: 1,
    transitionSample: 1,
    startupRuns: 0,
    batchMaxMs: 4_000,
    replayBatchMaxMs: 2_000,
    direct: false,
    peerOps: (c) => c * 4,
    checkoutReplays: () => 20,
    timelineSample: 2,
    ablationByDefault: false,
    ablation: { warmupOps: 1, opsC1: 2, opsC32: 8, batchMaxMs: 3_000, budgetMs: 60_000 },
    overloadByDefault: false,
    overload: {
      warmupOps: 1,
      idleOps: 3,
      referenceOps: 16,
      floods: [24],
      floodOps: 3,
      rampMs: 500,
      floodMaxMs: 10_000,
      // Every configuration runs (the tests check all three), even on a busy machine.
      budgetMs: 3 * 60_000,
      tenantRate: 2,
    },
    budget: { newOpsMs: 90_000, replaysMs: 10_000, contentionMs: 1_000 },
    hardLimitMs: 3 * 60_000,
  },
};

export type ActivityKindOption = 'auto' | 'regular' | 'local';

/** The overload section: alone (--overload), after the rest (the full run), or not at all. */
export type OverloadChoice = 'only' | 'also' | 'none';

export interface BenchOptions {
  mode: Mode;
  /** Race the same checkout on Restate and DBOS Transact (installs them on first use). */
  peers: boolean;
  ablation: boolean;
  overload: OverloadChoice;
  /** Which bare baseline R1 compares with: auto reads the kind off a checkout's history. */
  activityKind: ActivityKindOption;
  outDir: string;
  /** File name stem: `<date>` for the default mode, `<date>-<mode>` otherwise, `-overload` after it for --overload, or --name. */
  name: string;
  profile: boolean;
  keepData: boolean;
  logLevel: string;
}

export const USAGE = `npm run bench -- [--quick | --smoke] [--peers] [--ablation | --no-ablation] [--overload | --no-overload]
                       [--out DIR] [--name NAME] [--activity-kind auto|regular|local] [--profile] [--keep-data]

  (default)     the full run: every operation type at concurrency 1, 8, 32, three rounds each, the ablation and the
                overload section (30–40 minutes with --peers on a quiet 2-core machine; each phase has a time budget,
                so a busy machine gets a shorter report, not a longer run)
  --quick       one smaller round, no ablation, no overload (3–5 minutes, about 7 with --peers)
  --smoke       a handful of operations per scenario (CI)
  --overload    the overload section alone: a tenant floods new operations at c=200 and 400 while another sends
                one at a time, with and without Temporal's task queue fairness and with a tenant rate
                (about 9 minutes; with --quick one flood level, about 4)
  --no-overload leave the overload section out of the full run
  --peers       the same checkout on Restate and on DBOS Transact in the same run, beside retrysafe's
                (their npm packages are installed into tools/bench/peers on first use; DBOS needs PostgreSQL 15+)
  --ablation    each tuning setting of the embedded Temporal server switched off in turn (default: full run only)
  --no-ablation leave the ablation out of the full run
  --activity-kind  the bare baseline's activity kind for R1 (default auto: the kind retrysafe's checkout recorded)
  --out DIR     where <name>.json, <name>.md and <name>.svg go (default tools/bench/results)
  --name NAME   file name stem (default: the date, with -quick / -smoke appended)
  --profile     run the API and the worker with --cpu-prof and add their top functions
  --keep-data   keep the run's SQLite files (Temporal, bank, reservations)
  --log-level   LOG_LEVEL of the stack's processes (default warn)`;

export function parseOptions(argv: string[], today: Date = new Date()): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      peers: { type: 'boolean', default: false },
      ablation: { type: 'boolean', default: false },
      'no-ablation': { type: 'boolean', default: false },
      overload: { type: 'boolean', default: false },
      'no-overload': { type: 'boolean', default: false },
      'activity-kind': { type: 'string', default: 'auto' },
      out: { type: 'string' },
      name: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'keep-data': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'warn' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  if (values.quick && values.smoke) throw new Error('--quick and --smoke exclude each other');
  if (values.ablation && values['no-ablation']) throw new Error('--ablation and --no-ablation exclude each other');
  if (values.overload && values['no-overload']) throw new Error('--overload and --no-overload exclude each other');
  if (values.overload && (values.peers || values.ablation))
    throw new Error('--overload runs the overload section alone: --peers and --ablation do not apply');
  const activityKind = values['activity-kind'];
  if (activityKind !== 'auto' && activityKind !== 'regular' && activityKind !== 'local')
    throw new Error('--activity-kind: auto, regular or local');
  const mode = MODES[values.smoke ? 'smoke' : values.quick ? 'quick' : 'default'];
  const date = today.toISOString().slice(0, 10);
  if (values.name !== undefined && !/^[\w.-]{1,100}$/.test(values.name))
    throw new Error('--name: letters, digits, ".", "_", "-" only');
  const overload: OverloadChoice = values.overload ? 'only' : mode.overloadByDefault && !values['no-overload'] ? 'also' : 'none';
  const stem = `${date}${mode.name === 'default' ? '' : `-${mode.name}`}${overload === 'only' ? '-overload' : ''}`;
  return {
    mode,
    peers: values.peers,
    ablation: !values.overload && (values.ablation || (mode.ablationByDefault && !values['no-ablation'])),
    overload,
    activityKind,
    outDir: values.out ?? 'tools/bench/results',
    name: values.name ?? stem,
    profile: values.profile,
    keepData: values['keep-data'],
    logLevel: values['log-level'],
  };
}
