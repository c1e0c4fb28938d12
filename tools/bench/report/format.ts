// How the report writes numbers and tables: one rounding per kind of figure, so the same
// number reads the same in every section.
import type { ScenarioResult } from '../scenarios/measure.js';

export const n1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
export const n2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
/** Milliseconds: whole from 100, one decimal from 10, two below (1729, 73.2, 0.87). */
export const ms = (v: number) => (!Number.isFinite(v) ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
export const check = (ok: boolean) => (ok ? '✅' : '❌');
/** "1 activity", "3 no-op activities". */
export const activities = (n: number, kind = '') => `${n} ${kind}activit${n === 1 ? 'y' : 'ies'}`;

export function table(head: string[], rows: Array<Array<string | number>>): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
}

/** p50 / p95 / p99 of a scenario, or n/a when the run has none. */
export function pct(s: ScenarioResult | undefined): string {
  return s ? `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p95)} / ${ms(s.latencyMs.p99)}` : 'n/a';
}

/**
 * Two scenarios side by side, as the tables that set one against its baseline show them:
 * both rates (per second, `rate` of each), then both latencies (p50 / p95 / p99).
 */
export function sideBySide(
  a: ScenarioResult | undefined,
  b: ScenarioResult | undefined,
  rate: 'opsPerSec' | 'steadyOpsPerSec',
): string[] {
  return [n1(a?.[rate] ?? Number.NaN), n1(b?.[rate] ?? Number.NaN), pct(a), pct(b)];
}

/** CPU ms per operation of one process over a scenario (NaN: not metered, or no operations). */
export function cpuPerOp(s: ScenarioResult, proc: string): number {
  const cpu = s.usage.cpuMs[proc];
  return cpu === undefined || s.ops === 0 ? Number.NaN : cpu / s.ops;
}

/** Temporal RPCs per operation, in all and by method. */
export function rpcsPerOp(s: ScenarioResult): string {
  const entries = Object.entries(s.usage.rpcs);
  if (entries.length === 0) return '0';
  const total = entries.reduce((a, [, v]) => a + v, 0);
  return `${n2(total / s.ops)} (${entries.map(([m, v]) => `${m} ${n2(v / s.ops)}`).join(', ')})`;
}
