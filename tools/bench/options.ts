// The bench's command line and the three sizes of a run. Every count is fixed (no "run for N
// seconds") and every phase has a time budget, so a run is bounded and two runs of one mode
// do the same work; a busy machine gets a shorter report, not a longer run.
import { parseArgs } from 'node:util';

export type ModeName = 'default' | 'quick' | 'smoke';

const MIN = 60_000;

/**
 * The full run. Counts per concurrency (`ops`: new operations or bare workflows per kind and
 * round; `peerOps`: a peer's checkouts, which take a fraction of retrysafe's time; the replays,
 * uncached replays and checkout replays), the rounds (their order alternates: ABBA), the
 * samples of histories read, the bounds of a batch and of each phase (a batch starts nothing
 * past its time bound, a phase no batch past its budget), the sections beyond the first ones
 * and their counts, and the hard limit past which a run is aborted (it never should be).
 */
const DEFAULT = {
  name: 'default' as ModeName,
  concurrencies: [1, 8, 32],
  rounds: 3,
  ops: { 1: 60, 8: 160, 32: 320 } as Record<number, number>,
  peerOps: { 1: 100, 8: 400, 32: 1000 } as Record<number, number>,
  replays: { 1: 1000, 8: 2000, 32: 2000 } as Record<number, number>,
  uncachedReplays: { 1: 100, 8: 200, 32: 200 } as Record<number, number>,
  checkoutReplays: { 1: 300, 8: 600, 32: 600 } as Record<number, number>,
  warmupOps: 8,
  contentionRequests: 100,
  contentionTrials: 3,
  transitionSample: 20,
  timelineSample: 20,
  /** worker/main.ts from spawn to ready, this many times. */
  startupRuns: 2,
  batchMaxMs: 6_000,
  replayBatchMaxMs: 3_000,
  /** The decomposition: retrysafe's workflows without the API, bare workflows with its bookkeeping. */
  direct: true,
  ablationByDefault: true,
  /** Per row (a fresh engine each): checkouts and bare workflows at c=1 and c=32; no row starts past the budget. */
  ablation: { warmupOps: 6, opsC1: 20, opsC32: 96, batchMaxMs: 6_000, budgetMs: 5 * MIN },
  overloadByDefault: true,
  /**
   * Per configuration (a fresh engine each): tenant B alone and at c=32, then per flood level
   * A at it while B runs; A's rate in the rated configuration, or half the measured throughput.
   */
  overload: {
    warmupOps: 8,
    idleOps: 60,
    referenceOps: 320,
    floods: [200, 400],
    floodOps: 40,
    rampMs: 2_000,
    floodMaxMs: 45_000,
    budgetMs: 8 * MIN,
    tenantRate: undefined as number | undefined,
  },
  budget: { newOpsMs: 10 * MIN, replaysMs: 1.5 * MIN, contentionMs: MIN },
  hardLimitMs: 18 * MIN,
};

export type Mode = typeof DEFAULT;
export type AblationCounts = Mode['ablation'];
export type OverloadCounts = Mode['overload'];

/** The smaller modes: what differs from the full run. */
const SMALL = {
  rounds: 1,
  contentionTrials: 1,
  startupRuns: 0,
  direct: false,
  ablationByDefault: false,
  overloadByDefault: false,
};

export const MODES: Record<ModeName, Mode> = {
  default: DEFAULT,
  quick: {
    ...DEFAULT,
    ...SMALL,
    name: 'quick',
    ops: { 1: 20, 8: 48, 32: 96 },
    peerOps: { 1: 40, 8: 160, 32: 400 },
    replays: { 1: 300, 8: 600, 32: 600 },
    uncachedReplays: { 1: 30, 8: 60, 32: 60 },
    checkoutReplays: { 1: 100, 8: 200, 32: 200 },
    warmupOps: 12,
    transitionSample: 8,
    timelineSample: 8,
    batchMaxMs: 3_000,
    replayBatchMaxMs: 1_500,
    ablation: { warmupOps: 4, opsC1: 8, opsC32: 64, batchMaxMs: 4_000, budgetMs: 3 * MIN },
    overload: {
      warmupOps: 4,
      idleOps: 30,
      referenceOps: 128,
      floods: [200],
      floodOps: 30,
      rampMs: 1_500,
      floodMaxMs: 30_000,
      budgetMs: 3 * MIN,
      tenantRate: undefined,
    },
    budget: { newOpsMs: 150_000, replaysMs: 30_000, contentionMs: 8_000 },
    hardLimitMs: 6 * MIN,
  },
  smoke: {
    ...DEFAULT,
    ...SMALL,
    name: 'smoke',
    concurrencies: [1, 4],
    ops: { 1: 1, 4: 4 },
    peerOps: { 1: 4, 4: 16 },
    replays: { 1: 20, 4: 20 },
    uncachedReplays: { 1: 0, 4: 0 },
    checkoutReplays: { 1: 20, 4: 20 },
    warmupOps: 1,
    transitionSample: 1,
    timelineSample: 2,
    batchMaxMs: 4_000,
    replayBatchMaxMs: 2_000,
    ablation: { warmupOps: 1, opsC1: 2, opsC32: 8, batchMaxMs: 3_000, budgetMs: MIN },
    // Every configuration runs (the tests check all three), even on a busy machine; the flood
    // is too short for half a fast engine's throughput to be sure to be crossed: a fixed rate.
    overload: {
      warmupOps: 1,
      idleOps: 3,
      referenceOps: 16,
      floods: [24],
      floodOps: 3,
      rampMs: 500,
      floodMaxMs: 10_000,
      budgetMs: 3 * MIN,
      tenantRate: 2,
    },
    budget: { newOpsMs: 90_000, replaysMs: 10_000, contentionMs: 1_000 },
    hardLimitMs: 3 * MIN,
  },
};

/** With the peers, the new-operation phase has more batches (each short): its budget grows by this factor. */
export const PEERS_BUDGET_FACTOR = 1.25;

export type ActivityKindOption = 'auto' | 'regular' | 'local';
/** The overload section: alone (--overload), after the rest (the full run), or not at all. */
export type OverloadChoice = 'only' | 'also' | 'none';

export interface BenchOptions {
  mode: Mode;
  peers: boolean;
  ablation: boolean;
  overload: OverloadChoice;
  activityKind: ActivityKindOption;
  outDir: string;
  /** File name stem: `<date>`, `-<mode>` when not the default, `-overload` for --overload; or --name. */
  name: string;
  keepData: boolean;
  logLevel: string;
}

/** The hard time limit of a run with these options: the mode's, plus each section's budget. */
export function hardLimitMs(opts: Pick<BenchOptions, 'mode' | 'peers' | 'ablation' | 'overload'>): number {
  const { mode } = opts;
  // A configuration that starts just inside the budget may run its floods and audit past it.
  const overload = mode.overload.budgetMs + 3 * MIN;
  if (opts.overload === 'only') return overload + MIN;
  return (
    mode.hardLimitMs +
    (opts.peers ? mode.budget.newOpsMs * (PEERS_BUDGET_FACTOR - 1) + 2 * MIN : 0) +
    (opts.ablation ? mode.ablation.budgetMs + 2 * MIN : 0) +
    (opts.overload === 'also' ? overload : 0)
  );
}

export const USAGE = `npm run bench -- [--quick | --smoke] [--peers] [--ablation | --no-ablation] [--overload | --no-overload]
                       [--out DIR] [--name NAME] [--activity-kind auto|regular|local] [--keep-data]

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
  --keep-data   keep the run's SQLite files (Temporal, bank, reservations)
  --log-level   LOG_LEVEL of the stack's processes (default warn)`;

const FLAGS = ['quick', 'smoke', 'peers', 'ablation', 'no-ablation', 'overload', 'no-overload', 'keep-data', 'help'];

export function parseOptions(argv: string[], today: Date = new Date()): BenchOptions | 'help' {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      ...Object.fromEntries(FLAGS.map((f) => [f, { type: 'boolean' as const, default: false }])),
      'activity-kind': { type: 'string', default: 'auto' },
      out: { type: 'string', default: 'tools/bench/results' },
      name: { type: 'string' },
      'log-level': { type: 'string', default: 'warn' },
    },
    strict: true,
    allowPositionals: false,
  });
  const on = (flag: string) => (v as Record<string, unknown>)[flag] === true;
  if (on('help')) return 'help';
  for (const [a, b] of [
    ['quick', 'smoke'],
    ['ablation', 'no-ablation'],
    ['overload', 'no-overload'],
  ])
    if (on(a!) && on(b!)) throw new Error(`--${a} and --${b} exclude each other`);
  if (on('overload') && (on('peers') || on('ablation')))
    throw new Error('--overload runs the overload section alone: --peers and --ablation do not apply');
  const activityKind = v['activity-kind'] as ActivityKindOption;
  if (!['auto', 'regular', 'local'].includes(activityKind)) throw new Error('--activity-kind: auto, regular or local');
  const name = v.name as string | undefined;
  if (name !== undefined && !/^[\w.-]{1,100}$/.test(name)) throw new Error('--name: letters, digits, ".", "_", "-" only');
  const mode = MODES[on('smoke') ? 'smoke' : on('quick') ? 'quick' : 'default'];
  const overload: OverloadChoice = on('overload') ? 'only' : mode.overloadByDefault && !on('no-overload') ? 'also' : 'none';
  const stem = `${today.toISOString().slice(0, 10)}${mode.name === 'default' ? '' : `-${mode.name}`}${overload === 'only' ? '-overload' : ''}`;
  return {
    mode,
    peers: on('peers'),
    ablation: !on('overload') && (on('ablation') || (mode.ablationByDefault && !on('no-ablation'))),
    overload,
    activityKind,
    outDir: v.out as string,
    name: name ?? stem,
    keepData: on('keep-data'),
    logLevel: v['log-level'] as string,
  };
}

/** The `npm run bench` line that repeats a run: only the flags that differ from its mode's defaults. */
export function commandLine(opts: BenchOptions): string {
  const flags = [
    ...(opts.mode.name === 'default' ? [] : [`--${opts.mode.name}`]),
    ...(opts.overload === 'only' ? ['--overload'] : []),
    ...(opts.overload === 'none' && opts.mode.overloadByDefault ? ['--no-overload'] : []),
    ...(opts.peers ? ['--peers'] : []),
    ...(opts.overload !== 'only' && opts.ablation !== opts.mode.ablationByDefault
      ? [opts.ablation ? '--ablation' : '--no-ablation']
      : []),
    ...(opts.activityKind === 'auto' ? [] : [`--activity-kind ${opts.activityKind}`]),
  ];
  return `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`;
}
