// A small run to render sections from: the results of the 2026-12-02 full --peers run
// (tools/bench/results/2026-12-02.json) cut to c=1 and c=32, without latency samples, with two
// contention trials, three ablation rows and one tuning setting. Its figures are real, so
// a section's rows for c=1 and c=32 read as in that run's committed report.
import { readFileSync } from 'node:fs';
import { reportContext, type ReportFiles, type Section } from '../../../tools/bench/report/context.js';
import { computeRatios, type BenchResults } from '../../../tools/bench/results.js';
import type { Kind, ScenarioResult } from '../../../tools/bench/scenarios/measure.js';
import {
  AS_SHIPPED,
  FAIRNESS_OFF,
  TENANT_RATE,
  type OverloadAudit,
  type OverloadResult,
  type OverloadRow,
  type TenantFigures,
} from '../../../tools/bench/scenarios/overload-figures.js';

const TEXT = readFileSync(new URL('fixture.json', import.meta.url), 'utf8');

export const FILES: ReportFiles = { json: 'run.json', svg: 'run.svg', png: 'run.png' };

/** A fresh copy each call: tests change it to take parts away. */
export function fixture(): BenchResults {
  return JSON.parse(TEXT) as BenchResults;
}

/** A section's lines for a run (none: the section is left out of the report). */
export function lines(section: Section, r: BenchResults = fixture(), files: ReportFiles = FILES): string[] {
  return section(reportContext(r, files));
}

/** What a section prints for a run, as the Markdown it adds to the report. */
export function render(section: Section, r: BenchResults = fixture(), files: ReportFiles = FILES): string {
  return lines(section, r, files).join('\n');
}

export function scenario(r: BenchResults, kind: Kind, c: number): ScenarioResult {
  const s = r.scenarios.find((x) => x.kind === kind && x.concurrency === c);
  if (!s) throw new Error(`no ${kind} c=${c} in the fixture`);
  return s;
}

/** The lines of `text` that start with any of `prefixes` (a table's rows for some systems, say), in their order. */
export function linesStarting(text: string, ...prefixes: string[]): string[] {
  return text.split('\n').filter((l) => prefixes.some((p) => l.startsWith(p)));
}

/** The scenario kinds of the fixture's two operations, as today's bench records them (with the same-work baseline). */
export const OPERATIONS = [
  { own: 'payment', bare: 'bare1', activities: 1, tracked: 'bare1-tracked', direct: 'payment-direct', fair: 'bare-http-payment' },
  {
    own: 'checkout',
    bare: 'bare3',
    activities: 3,
    tracked: 'bare3-tracked',
    direct: 'checkout-direct',
    fair: 'bare-http-checkout',
  },
];

/**
 * The fixture as today's bench records a run: its operations named, each with a same-work
 * baseline at round figures (100 operations; 20/s at c=1 and 25/s at c=32; p50 50 ms, p99
 * 80 ms; CPU ms in all: worker 3000, Temporal 5000, bank 400, reservations 600 for the
 * checkout, the bench 1000, the idle API 100), its ratios recomputed and its verdicts left
 * to be judged.
 */
export function sameWorkRun(): BenchResults {
  const r = fixture();
  r.operations = OPERATIONS.map((op) => ({ ...op }));
  for (const op of OPERATIONS) {
    for (const c of [1, 32]) {
      const s = structuredClone(scenario(r, op.bare as Kind, c));
      s.kind = op.fair;
      s.ops = 100;
      s.steadyOpsPerSec = c === 1 ? 20 : 25;
      s.opsPerSec = s.steadyOpsPerSec;
      s.latencyMs = { n: 100, mean: 55, min: 40, p50: 50, p95: 70, p99: 80, max: 90 };
      s.usage.cpuMs = {
        api: 100,
        baselineWorker: 3000,
        temporal: 5000,
        bank: 400,
        reservations: op.own === 'checkout' ? 600 : 0,
        orchestrator: 1000,
      };
      r.scenarios.push(s);
    }
  }
  r.ratios = computeRatios(r.scenarios, [1, 32], r.operations);
  delete r.verdicts;
  return r;
}

const figures = (p50: number, p99: number, extra: Partial<TenantFigures> = {}): TenantFigures => ({
  ended: 10,
  succeeded: 10,
  errors: 0,
  errorSamples: [],
  answers: { 200: 10 },
  latencyMs: { n: 10, mean: p50, min: p50, p50, p95: p99, p99, max: p99 },
  samplesMs: [],
  wallMs: 1000,
  ...extra,
});

const audit = (accepted: number, problems: string[] = []): OverloadAudit => ({
  accepted,
  terminal: accepted,
  succeeded: accepted,
  accounts: [
    { tenant: 'tenant-a', account: 'a', expected: 1250 * (accepted - 40), moved: 1250 * (accepted - 40) },
    { tenant: 'tenant-b', account: 'b', expected: 1250 * 40, moved: 1250 * 40 },
  ],
  badAnswers: 0,
  badSamples: [],
  ok: problems.length === 0,
  problems,
});

/**
 * An overload section at round figures: as shipped, tenant B 40 ms alone and 60 / 150 ms
 * (p50) during floods at c=200 / 400, tenant A 45 and 40 successes/s against 50/s at c=32;
 * fairness off twice as slow for B; the tenant-rate configuration left out by the budget.
 */
export function overloadRun(): OverloadResult {
  const row = (name: string, fairness: boolean, slow: number): OverloadRow => ({
    name,
    fairness,
    tenantLimits: null,
    idle: figures(40, 60),
    reference: { concurrency: 32, opsPerSec: 50, figures: figures(640, 900) },
    floods: [
      {
        concurrency: 200,
        a: figures(3000, 5000, { succeeded: 900, answers: { 200: 900, '503 engine_busy': 2400 } }),
        b: figures(60 * slow, 120 * slow),
        aGoodput: 45,
      },
      {
        concurrency: 400,
        a: figures(5000, 9000, { succeeded: 800, answers: { 200: 800, '503 engine_busy': 6100, 202: 3 } }),
        b: figures(150 * slow, 300 * slow),
        aGoodput: 40,
      },
    ],
    audit: audit(1743),
    argv: [],
  });
  return {
    type: 'payment',
    tenants: { flood: 'tenant-a', steady: 'tenant-b' },
    counts: {
      warmupOps: 8,
      idleOps: 60,
      referenceOps: 320,
      floods: [200, 400],
      floodOps: 60,
      rampMs: 2_000,
      floodMaxMs: 45_000,
      budgetMs: 360_000,
    },
    rows: [row(AS_SHIPPED, true, 1), row(FAIRNESS_OFF, false, 2)],
    skipped: [TENANT_RATE],
  };
}
