// `npx tsx tools/bench/cpu-per-op.ts`: the CPU time each process spends per new operation, so
// that a change meant to make retrysafe cheaper is judged by what it saves, on a shared
// machine where latency is noise. On one tuned Temporal dev server and the bench's sandboxes,
// each variant (a checkout of the repository: a folder, or a git revision it unpacks) runs
// its own worker and API as production runs them (worker/main.ts, client/api/server.ts, or
// their compiled twins under dist/), each on its own task queue; with --bare, plain Temporal
// making the same keyed HTTP calls runs beside them (the main bench's same-work baseline).
// Batches of N operations run at each concurrency, the variants interleaved and their order
// reversed every round, and each batch reads every process's CPU time (/proc: user + system,
// all threads) before and after. With --replay <history.json>, no stack: each variant's
// workflow bundle replays the stored history in this process, and the figure is this
// process's CPU per execution: the workflow code's own cost, free of the network and Temporal.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { builtInRegistry } from '../../workflows/registry.js';
import { BARE } from './cpu/report.js';
import { replayMain, runOnStack } from './cpu/run.js';

export const USAGE = `npx tsx tools/bench/cpu-per-op.ts [options]

  --variant name=<folder|git revision>[:dist]   a checkout to measure (repeatable; default: this one as "this").
                       A revision is unpacked under .data/cpu-variants/; ":dist" runs its compiled build.
  --bare               also run plain Temporal making the same keyed calls (the fair baseline)
  --types a,b          operation types (default: every built-in type)
  --concurrency 1,8    concurrencies (default 1,8)
  --ops N              operations per batch (default 40)
  --rounds N           rounds; the order of the variants is reversed every round (default 4)
  --warmup N           unmeasured operations per variant and type first (default 10)
  --log-level L        LOG_LEVEL of the workers and APIs (default warn)
  --cpu-prof name.part write V8 CPU profiles of a variant's worker or api (repeatable) and summarise them
  --json FILE          also write every batch as JSON
  --replay FILE        instead of the stack: replay this stored history with each variant's bundle
  --executions N       with --replay: executions per variant and round (default 100)`;

export interface VariantSpec {
  name: string;
  source: string;
  compiled: boolean;
}

export type Options = ReturnType<typeof parseOptions>;

function positiveInts(raw: string, what: string): number[] {
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${what}: positive integers`);
  return values;
}

export function parseOptions(argv: string[]) {
  const string = (d?: string) => ({ type: 'string' as const, ...(d === undefined ? {} : { default: d }) });
  const { values: v } = parseArgs({
    args: argv,
    options: {
      ...{
        variant: { type: 'string', multiple: true },
        'cpu-prof': { type: 'string', multiple: true },
        bare: { type: 'boolean', default: false },
      },
      ...{
        types: string(),
        concurrency: string('1,8'),
        ops: string('40'),
        rounds: string('4'),
        warmup: string('10'),
        'log-level': string('warn'),
      },
      ...{ json: string(), replay: string(), executions: string('100'), help: { type: 'boolean', default: false } },
    },
    strict: true,
  });
  if (v.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const variants = (v.variant ?? ['this=.']).map((raw): VariantSpec => {
    const match = /^([a-z][a-z0-9_-]{0,19})=(.+?)(:dist)?$/.exec(raw);
    if (!match) throw new Error(`--variant ${raw}: expected name=<folder|revision>[:dist]`);
    if (match[1] === BARE) throw new Error(`--variant: "${BARE}" names the baseline`);
    return { name: match[1]!, source: match[2]!, compiled: match[3] !== undefined };
  });
  if (new Set(variants.map((x) => x.name)).size !== variants.length) throw new Error('--variant: names must differ');
  const types = v.types ? v.types.split(',').map((t) => t.trim()) : [...builtInRegistry.types];
  for (const type of types) if (!builtInRegistry.get(type)) throw new Error(`--types: ${type} is not a built-in operation type`);
  const warmup = Number(v.warmup);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error('--warmup: a whole number');
  const parts = new Set(variants.flatMap((x) => [`${x.name}.worker`, `${x.name}.api`]));
  for (const p of v['cpu-prof'] ?? []) if (!parts.has(p)) throw new Error(`--cpu-prof ${p}: expected <variant>.worker|api`);
  if (v.replay !== undefined && !existsSync(v.replay)) throw new Error(`--replay ${v.replay}: no such file`);
  return {
    ...{ replay: v.replay, executions: positiveInts(v.executions!, '--executions')[0]!, variants, bare: v.bare!, types },
    ...{
      concurrencies: positiveInts(v.concurrency!, '--concurrency'),
      ops: positiveInts(v.ops!, '--ops')[0]!,
      rounds: positiveInts(v.rounds!, '--rounds')[0]!,
    },
    ...{ warmup, logLevel: v['log-level']!, cpuProf: v['cpu-prof'] ?? [], json: v.json },
  };
}

const opts = parseOptions(process.argv.slice(2));
(opts.replay ? replayMain(opts, opts.replay) : runOnStack(opts)).catch((err) => {
  console.error(err);
  process.exit(1);
});
