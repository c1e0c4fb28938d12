// The CPU bench's tables: ms of CPU per operation by process role, per type and
// concurrency, each variant against the first, paired by round, and against bare.
import { BARE, type Options } from './options.js';

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

/** Mean ms per operation by role, over a target's batches of one type and concurrency. */
function perOp(batches: BatchRecord[]): {
  roles: Record<string, number>;
  total: number;
  rounds: number[];
  roleRounds: Record<string, number[]>;
} {
  const ops = batches.reduce((n, b) => n + b.ops, 0);
  const roles: Record<string, number> = {};
  const roleRounds: Record<string, number[]> = {};
  for (const role of ROLES) {
    roles[role] = batches.reduce((n, b) => n + (b.cpuMs[role] ?? 0), 0) / ops;
    roleRounds[role] = batches.map((b) => (b.cpuMs[role] ?? 0) / b.ops);
  }
  const isBare = batches[0]?.target === BARE;
  // What does the operation's work: the driver is the client of a bare workflow, but only the load generator of an API.
  const work = (cpu: Record<string, number>) =>
    ROLES.filter((r) => r !== 'driver' || isBare).reduce((n, r) => n + (cpu[r] ?? 0), 0);
  return {
    roles,
    total: batches.reduce((n, b) => n + work(b.cpuMs), 0) / ops,
    rounds: batches.map((b) => work(b.cpuMs) / b.ops),
    roleRounds,
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

export function report(records: BatchRecord[], targets: string[], opts: Pick<Options, 'types' | 'concurrencies'>): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
  const lines: string[] = [];
  for (const type of opts.types) {
    for (const c of opts.concurrencies) {
      const cell = records.filter((r) => r.type === type && r.concurrency === c);
      const errors = cell.flatMap((r) => r.errors);
      // A round in which any batch failed is left out for every target: its CPU bought fewer
      // operations (or timeouts), and the rounds stay paired.
      const failedRounds = new Set(cell.filter((r) => r.errors.length > 0).map((r) => r.round));
      const clean = cell.filter((r) => !failedRounds.has(r.round));
      const stats = targets.map((t) => perOp(clean.filter((r) => r.target === t)));
      const ops = clean.filter((r) => r.target === targets[0]).reduce((n, b) => n + b.ops, 0);
      lines.push(`### ${type}, c=${c} (ms of CPU per operation; ${ops} operations per column)`, '');
      const base = stats[0]!;
      const others = targets.slice(1).filter((t) => t !== BARE);
      lines.push(`| process | ${targets.join(' | ')} |${others.map((t) => ` ${t} − ${targets[0]} |`).join('')}`);
      lines.push(`|---|${targets.map(() => '---|').join('')}${others.map(() => '---|').join('')}`);
      for (const role of ROLES) {
        const label = role === 'driver' ? 'driver (client of bare)' : role;
        const deltas = others.map((t) => stats[targets.indexOf(t)]!.roles[role]! - base.roles[role]!);
        lines.push(
          `| ${label} | ${stats.map((s) => f(s.roles[role]!)).join(' | ')} |${deltas.map((d) => ` ${d >= 0 ? '+' : ''}${f(d)} |`).join('')}`,
        );
      }
      const totals = others.map((t) => stats[targets.indexOf(t)]!.total - base.total);
      lines.push(
        `| **all** | ${stats.map((s) => `**${f(s.total)}**`).join(' | ')} |${totals.map((d) => ` ${d >= 0 ? '+' : ''}${f(d)} (${f((100 * d) / base.total)} %) |`).join('')}`,
      );
      lines.push(
        `| all, per round (min–max) | ${stats.map((s) => `${f(Math.min(...s.rounds))}–${f(Math.max(...s.rounds))}`).join(' | ')} |${others.map(() => ' |').join('')}`,
      );
      const paired = (rounds: (stat: (typeof stats)[number]) => number[]) =>
        others.map((t) => {
          const { mean, twoSe } = pairedDifference(rounds(base), rounds(stats[targets.indexOf(t)]!));
          return ` ${mean >= 0 ? '+' : ''}${f(mean)} ± ${f(twoSe)} |`;
        });
      if (others.length > 0 && base.rounds.length > 1) {
        for (const role of ['api', 'worker', 'temporal'] as const) {
          lines.push(
            `| ${role}, paired by round (mean ± 2 SE) | ${targets.map(() => '').join(' | ')} |${paired((s) => s.roleRounds[role]!).join('')}`,
          );
        }
        lines.push(
          `| all, paired by round (mean ± 2 SE) | ${targets.map(() => '').join(' | ')} |${paired((s) => s.rounds).join('')}`,
        );
      }
      const bare = targets.indexOf(BARE);
      if (bare >= 0) {
        lines.push(
          `| all ÷ bare | ${stats.map((s) => (s.total / stats[bare]!.total).toFixed(2)).join(' | ')} |${others.map(() => ' |').join('')}`,
        );
      }
      if (errors.length > 0) {
        lines.push(
          '',
          `errors (${errors.length}; ${failedRounds.size} round(s) left out): ${[...new Set(errors)].slice(0, 3).join('; ')}`,
        );
      }
      lines.push('');
    }
  }
  return lines.join('\n');
}
