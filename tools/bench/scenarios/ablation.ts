// The ablation of the embedded server's tuning: the same measurement on a fresh engine
// (dev server on a new SQLite file, API, both workers) per configuration: every setting,
// none (the dev server's own defaults), and each setting switched off in turn. Each row
// measures retrysafe's operation with the most steps (the checkout) and the bare workflow
// with as many no-op steps of the same activity kind at concurrency 1 (p50) and 32
// (operations/s). The sandboxes are the run's own;
// the run's engine and the peers are stopped first, so a row has the machine to itself.
import { Accounting } from '../accounting.js';
import { closedLoop } from '../load.js';
import type { AblationCounts } from '../modes.js';
import { startRowEngine, type RowEngines } from '../stack.js';
import type { Tuning } from '../tuning.js';
import { emptyFinished, type BenchContext } from './context.js';
import { measured, merge, type Batch } from './measure.js';
import { bareWorkflow, newOperation, operationsMeasured } from './new-operations.js';

export interface AblationFigures {
  c1P50Ms: number;
  c32OpsPerSec: number;
  n: { c1: number; c32: number };
  errors: number;
}

export interface AblationRow {
  name: string;
  without: string[];
  argv: string[];
  /** The figures of the operation measured (`AblationResult.operation`; the checkout in runs that did not name it). */
  checkout: AblationFigures;
  bare: AblationFigures;
}

export interface AblationResult {
  /** The operation type measured, and its number of steps (the bare workflow's activities); absent: checkout, 3. */
  operation?: string;
  steps?: number;
  tuningSource: string;
  settings: Array<{ name: string; args: readonly string[]; why: string }>;
  counts: AblationCounts;
  rows: AblationRow[];
  /** Rows the time budget left out. */
  skipped: string[];
}

export const ALL_ON = 'every setting (as shipped)';
export const ALL_OFF = "none (the dev server's defaults)";

/**
 * The configurations, in the order they run: all on and all off first (the whole effect,
 * kept when the time budget cuts the list short), then each setting off in turn.
 */
export function ablationPlan(tuning: Tuning): Array<{ name: string; without: string[] }> {
  const names = tuning.settings.map((s) => s.name);
  if (names.length === 0) return [{ name: ALL_OFF, without: [] }];
  return [
    { name: ALL_ON, without: [] },
    ...(names.length > 1 ? [{ name: ALL_OFF, without: names }] : []),
    ...names.map((n) => ({ name: `without ${n}`, without: [n] })),
  ];
}

function figures(c1: Batch[], c32: Batch[]): AblationFigures {
  const one = c1.length ? merge(c1) : undefined;
  const many = c32.length ? merge(c32) : undefined;
  return {
    c1P50Ms: one?.latencyMs.p50 ?? Number.NaN,
    c32OpsPerSec: many?.steadyOpsPerSec ?? Number.NaN,
    n: { c1: one?.ops ?? 0, c32: many?.ops ?? 0 },
    errors: (one?.errors ?? 0) + (many?.errors ?? 0),
  };
}

export async function runAblation(
  base: BenchContext,
  opts: RowEngines & { tuning: Tuning; counts: AblationCounts },
): Promise<AblationResult> {
  const { counts, tuning } = opts;
  const started = performance.now();
  const rows: AblationRow[] = [];
  const skipped: string[] = [];
  const plan = ablationPlan(tuning);
  // The operation with the most steps: what the server's settings act on most.
  const op = [...operationsMeasured()].sort((a, b) => b.activities - a.activities)[0]!;
  for (const [i, row] of plan.entries()) {
    if (performance.now() - started > counts.budgetMs) {
      skipped.push(row.name);
      continue;
    }
    base.log(`ablation ${i + 1}/${plan.length}: ${row.name}`);
    const stack = await startRowEngine(opts, { folder: `ablation-${i}`, without: row.without, log: base.log });
    try {
      const ctx: BenchContext = {
        ...base,
        stack,
        accounting: new Accounting(stack.pids, base.http, [stack.urls.api]),
        finished: emptyFinished(),
        charges: new Map(),
        skipped: [],
      };
      const tag = `abl${i}`;
      const warm = Math.min(4, counts.warmupOps);
      await closedLoop(counts.warmupOps, warm, (n) => newOperation(ctx, op.own, `${tag}-warm`)(n), counts.batchMaxMs);
      await closedLoop(counts.warmupOps, warm, (n) => bareWorkflow(ctx, stack.client, op, `${tag}-warm`)(n), counts.batchMaxMs);
      const batches = { own: { c1: [] as Batch[], c32: [] as Batch[] }, bare: { c1: [] as Batch[], c32: [] as Batch[] } };
      // Alternating which goes first, so that drift during a row does not favour one side.
      const order = i % 2 === 0 ? (['own', 'bare'] as const) : (['bare', 'own'] as const);
      for (const [c, n, slot] of [
        [1, counts.opsC1, 'c1'],
        [32, counts.opsC32, 'c32'],
      ] as const) {
        for (const who of order) {
          const run =
            who === 'own' ? newOperation(ctx, op.own, `${tag}-c${c}`) : bareWorkflow(ctx, stack.client, op, `${tag}-c${c}`);
          batches[who][slot].push(await measured(ctx, who === 'own' ? op.own : op.bare, c, n, (k) => run(k), counts.batchMaxMs));
        }
      }
      const result: AblationRow = {
        ...row,
        argv: stack.temporal.argv,
        checkout: figures(batches.own.c1, batches.own.c32),
        bare: figures(batches.bare.c1, batches.bare.c32),
      };
      base.log(
        `  ${op.own} c=1 p50 ${result.checkout.c1P50Ms.toFixed(1)} ms, c=32 ${result.checkout.c32OpsPerSec.toFixed(1)}/s; ` +
          `bare c=1 p50 ${result.bare.c1P50Ms.toFixed(1)} ms, c=32 ${result.bare.c32OpsPerSec.toFixed(1)}/s`,
      );
      rows.push(result);
    } finally {
      await stack.stop();
      opts.onEngine(undefined);
    }
  }
  return {
    operation: op.own,
    steps: op.activities,
    tuningSource: tuning.source,
    settings: tuning.settings.map((s) => ({ name: s.name, args: s.args, why: s.why })),
    counts,
    rows,
    skipped,
  };
}
