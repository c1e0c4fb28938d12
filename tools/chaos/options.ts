// Command line of `npm run chaos`. Bad values are refused with one line naming the
// option, then the usage, and exit code 2 (main.ts), before anything is started.
import { parseArgs } from 'node:util';
import ms from 'ms';
import type { Topology } from './fault-schedule.js';
import { defaultOps } from './plan.js';
import { DEFAULT_OPS_PER_SECOND } from './settings.js';

export const USAGE = `usage: npm run chaos -- [--cluster] [--seed N] [--duration 5m] [--ops M] [--settle 90s] [--report file.json] [--keep] [--plan]

  --cluster        run on the multi-process Temporal cluster on PostgreSQL (as npm run cluster)
                   instead of the embedded dev server; its crash faults are those of the cluster
  --seed N         seed of the plan and the fault schedule (0..4294967295, default 1)
  --duration D     how long load and faults run (10s..1h, default 5m)
  --ops M          logical operations to send (1..100000, default ${DEFAULT_OPS_PER_SECOND} per second of duration)
  --settle D       bound on waiting for every operation to finish after the faults stop (10s..30m, default 90s)
  --report FILE    also write the summary as JSON to FILE
  --keep           keep the temporary stack data (Temporal and ledger SQLite files, logs)
  --plan           print the plan's schedule and hash, start nothing
  -h, --help       this text`;

export interface ChaosOptions {
  topology: Topology;
  seed: number;
  durationMs: number;
  ops: number;
  settleMs: number;
  report?: string;
  keep: boolean;
  planOnly: boolean;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type ParsedArgs = { help: true } | ({ help: false } & ChaosOptions);

function durationOf(name: string, raw: string, min: number, max: number): number {
  const trimmed = raw.trim();
  const value = /^\d+$/.test(trimmed) ? Number(trimmed) : (ms(trimmed as ms.StringValue) as number | undefined);
  if (value === undefined || !Number.isFinite(value)) {
    throw new UsageError(`--${name} "${raw}" is not a duration (examples: 60s, 5m)`);
  }
  if (value < min || value > max) {
    throw new UsageError(`--${name} ${raw} is out of range (${ms(min)}..${ms(max)})`);
  }
  return value;
}

function integerOf(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--${name} "${raw}" is not a whole number`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new UsageError(`--${name} ${raw} is out of range (${min}..${max})`);
  return value;
}

export function parseChaosArgs(argv: string[]): ParsedArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        seed: { type: 'string' },
        duration: { type: 'string' },
        ops: { type: 'string' },
        settle: { type: 'string' },
        report: { type: 'string' },
        keep: { type: 'boolean' },
        plan: { type: 'boolean' },
        cluster: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    // node's messages are multi-line for some cases; the first line names the problem.
    throw new UsageError(String((err as Error).message).split('\n')[0]!);
  }
  if (values.help) return { help: true };
  const str = (name: string) => values[name] as string | undefined;
  const seed = str('seed') === undefined ? 1 : integerOf('seed', str('seed')!, 0, 0xffffffff);
  const durationMs = str('duration') === undefined ? 300_000 : durationOf('duration', str('duration')!, 10_000, 3_600_000);
  const ops = str('ops') === undefined ? defaultOps(durationMs) : integerOf('ops', str('ops')!, 1, 100_000);
  const settleMs = str('settle') === undefined ? 90_000 : durationOf('settle', str('settle')!, 10_000, 1_800_000);
  const report = str('report');
  if (report !== undefined && report.trim() === '') throw new UsageError('--report needs a file name');
  return {
    help: false,
    topology: values.cluster === true ? 'cluster' : 'embedded',
    seed,
    durationMs,
    ops,
    settleMs,
    report,
    keep: values.keep === true,
    planOnly: values.plan === true,
  };
}
