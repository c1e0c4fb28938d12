// The CPU bench's tables: ms of CPU per operation by process role, per type and concurrency,
// each variant against the first, paired by round, and against bare; and the replay table.
import { table } from '../report.js';

/** The bare baseline's name among the targets: no variant may take it. */
export const BARE = 'bare';

export interface BatchRecord {
  target: string;
  type: string;
  concurrency: number;
  round: number;
  ops: number;
  errors: string[];
  /** CPU ms per process over the batch. */
  cpuMs: Record<string, number>;
}

export const ROLES = ['api', 'worker', 'temporal', 'bank', 'reservations', 'driver'] as const;

const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
const signed = (n: number) => `${n >= 0 ? '+' : ''}${f(n)}`;

/** Mean ms per operation by role over a target's batches, and in all (the processes that do its work), overall and per round. */
function perOp(batches: BatchRecord[]) {
  const ops = batches.reduce((n, b) => n + b.ops, 0);
  // The driver is the client of a bare workflow, but only the load generator of an API.
  const work = (cpu: Record<string, number>) =>
    ROLES.filter((r) => r !== 'driver' || batches[0]?.target === BARE).reduce((n, r) => n + (cpu[r] ?? 0), 0);
  return {
    roles: Object.fromEntries(ROLES.map((role) => [role, batches.reduce((n, b) => n + (b.cpuMs[role] ?? 0), 0) / ops])),
    roleRounds: Object.fromEntries(ROLES.map((role) => [role, batches.map((b) => (b.cpuMs[role] ?? 0) / b.ops)])),
    total: batches.reduce((n, b) => n + work(b.cpuMs), 0) / ops,
    rounds: batches.map((b) => work(b.cpuMs) / b.ops),
  };
}

/**
 * The mean of the per-round differences between two targets and twice its standard error:
 * each round measures both back to back, so a difference within a round is free of the
 * machine's slower drift (other work on a shared machine comes and goes by the minute).
 */
export function pairedDifference(a: number[], b: number[]): { mean: number; twoSe: number } {
  const d = b.map((x, i) => x - a[i]!).filter((x) => Number.isFinite(x));
  const mean = d.reduce((n, x) => n + x, 0) / d.length;
  const variance = d.length > 1 ? d.reduce((n, x) => n + (x - mean) ** 2, 0) / (d.length - 1) : NaN;
  return { mean, twoSe: 2 * Math.sqrt(variance / d.length) };
}

/** One type at one concurrency: a row per role, the totals, the paired differences, and all ÷ bare. */
function cell(records: BatchRecord[], targets: string[]): string[] {
  const errors = records.flatMap((r) => r.errors);
  // A round in which any batch failed is left out for every target: the rounds stay paired.
  const failedRounds = new Set(records.filter((r) => r.errors.length > 0).map((r) => r.round));
  const clean = records.filter((r) => !failedRounds.has(r.round));
  const stats = targets.map((t) => perOp(clean.filter((r) => r.target === t)));
  const base = stats[0]!;
  const others = targets.slice(1).filter((t) => t !== BARE);
  const of = (t: string) => stats[targets.indexOf(t)]!;
  const blank = targets.map(() => '');
  const paired = (rounds: (s: typeof base) => number[]) =>
    others.map((t) => ((d) => `${signed(d.mean)} ± ${f(d.twoSe)}`)(pairedDifference(rounds(base), rounds(of(t)))));
  const rows = [
    ...ROLES.map((role) => [
      role === 'driver' ? 'driver (client of bare)' : role,
      ...stats.map((s) => f(s.roles[role]!)),
      ...others.map((t) => signed(of(t).roles[role]! - base.roles[role]!)),
    ]),
    [
      '**all**',
      ...stats.map((s) => `**${f(s.total)}**`),
      ...others.map((t) => `${signed(of(t).total - base.total)} (${f((100 * (of(t).total - base.total)) / base.total)} %)`),
    ],
    [
      'all, per round (min–max)',
      ...stats.map((s) => `${f(Math.min(...s.rounds))}–${f(Math.max(...s.rounds))}`),
      ...others.map(() => ''),
    ],
    ...(others.length > 0 && base.rounds.length > 1
      ? [
          ...(['api', 'worker', 'temporal'] as const).map((role) => [
            `${role}, paired by round (mean ± 2 SE)`,
            ...blank,
            ...paired((s) => s.roleRounds[role]!),
          ]),
          ['all, paired by round (mean ± 2 SE)', ...blank, ...paired((s) => s.rounds)],
        ]
      : []),
    ...(targets.includes(BARE)
      ? [['all ÷ bare', ...stats.map((s) => (s.total / of(BARE).total).toFixed(2)), ...others.map(() => '')]]
      : []),
  ];
  const ops = clean.filter((r) => r.target === targets[0]).reduce((n, b) => n + b.ops, 0);
  return [
    `### ${records[0]?.type}, c=${records[0]?.concurrency} (ms of CPU per operation; ${ops} operations per column)`,
    '',
    table(['process', ...targets, ...others.map((t) => `${t} − ${targets[0]}`)], rows),
    ...(errors.length
      ? ['', `errors (${errors.length}; ${failedRounds.size} round(s) left out): ${[...new Set(errors)].slice(0, 3).join('; ')}`]
      : []),
    '',
  ];
}

export function report(records: BatchRecord[], targets: string[], opts: { types: string[]; concurrencies: number[] }): string {
  return opts.types
    .flatMap((type) =>
      opts.concurrencies.flatMap((c) =>
        cell(
          records.filter((r) => r.type === type && r.concurrency === c),
          targets,
        ),
      ),
    )
    .join('\n');
}

/** CPU per replayed execution, per variant, against the first paired by round. */
export function replayReport(perExecution: Map<string, number[]>, rounds: number, executions: number): string {
  const names = [...perExecution.keys()];
  const first = perExecution.get(names[0]!)!;
  return table(
    ['variant', `ms per execution (mean of ${rounds} rounds × ${executions})`, `− ${names[0]}, paired by round (mean ± 2 SE)`],
    names.map((name) => {
      const values = perExecution.get(name)!;
      const { mean, twoSe } = pairedDifference(first, values);
      const mean2 = values.reduce((n, x) => n + x, 0) / values.length;
      return [name, mean2.toFixed(2), name === names[0] ? '' : `${mean >= 0 ? '+' : ''}${mean.toFixed(2)} ± ${twoSe.toFixed(2)}`];
    }),
  );
}
