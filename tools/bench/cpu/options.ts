// The CPU bench's command line: the variants to measure (a folder or a git revision, from
// source or compiled), the bare baseline, the types, concurrencies and counts, and --replay.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { builtInRegistry } from '../../../workflows/registry.js';

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

/** The bare baseline's name among the targets: no variant may take it. */
export const BARE = 'bare';

export interface VariantSpec {
  name: string;
  source: string;
  compiled: boolean;
}

export interface Options {
  replay: string | undefined;
  executions: number;
  variants: VariantSpec[];
  bare: boolean;
  types: string[];
  concurrencies: number[];
  ops: number;
  rounds: number;
  warmup: number;
  logLevel: string;
  cpuProf: string[];
  json: string | undefined;
}

function positiveInts(raw: string, what: string): number[] {
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${what}: positive integers`);
  return values;
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      variant: { type: 'string', multiple: true },
      bare: { type: 'boolean', default: false },
      types: { type: 'string' },
      concurrency: { type: 'string', default: '1,8' },
      ops: { type: 'string', default: '40' },
      rounds: { type: 'string', default: '4' },
      warmup: { type: 'string', default: '10' },
      'log-level': { type: 'string', default: 'warn' },
      'cpu-prof': { type: 'string', multiple: true },
      json: { type: 'string' },
      replay: { type: 'string' },
      executions: { type: 'string', default: '100' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const variants = (values.variant ?? ['this=.']).map((raw): VariantSpec => {
    const match = /^([a-z][a-z0-9_-]{0,19})=(.+?)(:dist)?$/.exec(raw);
    if (!match) throw new Error(`--variant ${raw}: expected name=<folder|revision>[:dist]`);
    if (match[1] === BARE) throw new Error(`--variant: "${BARE}" names the baseline`);
    return { name: match[1]!, source: match[2]!, compiled: match[3] !== undefined };
  });
  if (new Set(variants.map((v) => v.name)).size !== variants.length) throw new Error('--variant: names must differ');
  const types = values.types ? values.types.split(',').map((t) => t.trim()) : [...builtInRegistry.types];
  for (const type of types) {
    if (!builtInRegistry.get(type)) throw new Error(`--types: ${type} is not a built-in operation type`);
  }
  const [ops] = positiveInts(values.ops, '--ops');
  const [rounds] = positiveInts(values.rounds, '--rounds');
  const warmup = Number(values.warmup);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error('--warmup: a whole number');
  const parts = new Set([...variants.map((v) => `${v.name}.worker`), ...variants.map((v) => `${v.name}.api`)]);
  for (const p of values['cpu-prof'] ?? []) if (!parts.has(p)) throw new Error(`--cpu-prof ${p}: expected <variant>.worker|api`);
  const [executions] = positiveInts(values.executions, '--executions');
  if (values.replay !== undefined && !existsSync(values.replay)) throw new Error(`--replay ${values.replay}: no such file`);
  return {
    replay: values.replay,
    executions: executions!,
    variants,
    bare: values.bare,
    types,
    concurrencies: positiveInts(values.concurrency, '--concurrency'),
    ops: ops!,
    rounds: rounds!,
    warmup,
    logLevel: values['log-level'],
    cpuProf: values['cpu-prof'] ?? [],
    json: values.json,
  };
}
