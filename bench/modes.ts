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
   * Time budget from the start of the run: no new-operation batch starts after
   * `newOpsBy`, no replay batch after `replaysBy`, no contention trial beyond the first
   * after `contentionBy`. A slow (busy) machine gets a shorter report, not a longer run.
   */
  budget: { newOpsBy: number; replaysBy: number; contentionBy: number };
  /** The run is aborted past this (it never should be). */
  hardLimitMs: number;
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
    budget: { newOpsBy: 6.5 * 60_000, replaysBy: 8 * 60_000, contentionBy: 8.5 * 60_000 },
    hardLimitMs: 11 * 60_000,
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
    budget: { newOpsBy: 75_000, replaysBy: 90_000, contentionBy: 95_000 },
    hardLimitMs: 3 * 60_000,
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
    budget: { newOpsBy: 90_000, replaysBy: 100_000, contentionBy: 100_000 },
    hardLimitMs: 3 * 60_000,
  },
};

export interface BenchOptions {
  mode: Mode;
  outDir: string;
  /** File name stem: `<date>` for the default mode, `<date>-<mode>` otherwise, or --name. */
  name: string;
  profile: boolean;
  keepData: boolean;
  logLevel: string;
}

export const USAGE = `npm run bench -- [--quick | --smoke] [--out DIR] [--name NAME] [--profile] [--keep-data]

  (default)     the full run: concurrency 1, 8, 32, three rounds each (under 10 minutes)
  --quick       one smaller round (under 2 minutes)
  --smoke       a handful of operations per scenario (CI)
  --out DIR     where <name>.json, <name>.md and <name>.svg go (default bench/results)
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
  const mode = MODES[values.smoke ? 'smoke' : values.quick ? 'quick' : 'default'];
  const date = today.toISOString().slice(0, 10);
  if (values.name !== undefined && !/^[\w.-]{1,100}$/.test(values.name))
    throw new Error('--name: letters, digits, ".", "_", "-" only');
  return {
    mode,
    outDir: values.out ?? 'bench/results',
    name: values.name ?? (mode.name === 'default' ? date : `${date}-${mode.name}`),
    profile: values.profile,
    keepData: values['keep-data'],
    logLevel: values['log-level'],
  };
}
