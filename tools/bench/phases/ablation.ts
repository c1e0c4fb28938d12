// The ablation of the embedded server's tuning: the same measurement on a fresh engine per
// configuration (every setting, none: the dev server's own defaults, then each setting
// switched off in turn), on the run's sandboxes, with the run's engine and the peers stopped
// so a row has the machine to itself. Each row measures the operation with the most steps
// (the checkout) and the bare workflow with as many no-op steps of the same activity kind at
// concurrency 1 (p50) and 32 (operations/s), in an order alternating by row.
import { DEV_SERVER_TUNING } from '../../dev-server.js';
import { closedLoop, measured, merge, type Batch } from '../load.js';
import { Accounting } from '../meter.js';
import type { AblationCounts } from '../options.js';
import { onRowEngine } from '../stack.js';
import type { BenchContext } from './context.js';
import { bareWorkflow, newOperation, operationsMeasured } from './operations.js';

export interface AblationFigures {
  c1P50Ms: number;
  c32OpsPerSec: number;
  n: { c1: number; c32: number };
  errors: number;
}

export interface AblationResult {
  /** The operation type measured, and its number of steps (the bare workflow's activities). */
  operation: string;
  steps: number;
  tuningSource: string;
  settings: Array<{ name: string; args: readonly string[]; why: string }>;
  counts: AblationCounts;
  /** `checkout`: the figures of the operation measured. */
  rows: Array<{ name: string; without: string[]; argv: string[]; checkout: AblationFigures; bare: AblationFigures }>;
  /** Rows the time budget left out. */
  skipped: string[];
}

export const TUNING_SOURCE = 'tools/dev-server.ts DEV_SERVER_TUNING';
export const ALL_ON = 'every setting (as shipped)';
export const ALL_OFF = "none (the dev server's defaults)";

/** The configurations, in the order they run: all on and all off first (the whole effect, kept when the budget cuts the list short). */
export function ablationPlan(names: readonly string[]): Array<{ name: string; without: string[] }> {
  if (names.length === 0) return [{ name: ALL_OFF, without: [] }];
  return [
    { name: ALL_ON, without: [] },
    ...(names.length > 1 ? [{ name: ALL_OFF, without: [...names] }] : []),
    ...names.map((n) => ({ name: `without ${n}`, without: [n] })),
  ];
}

function figures(batches: Batch[][]): AblationFigures {
  const [one, many] = batches.map((b) => (b.length ? merge(b) : undefined));
  return {
    c1P50Ms: one?.latencyMs.p50 ?? Number.NaN,
    c32OpsPerSec: many?.steadyOpsPerSec ?? Number.NaN,
    n: { c1: one?.ops ?? 0, c32: many?.ops ?? 0 },
    errors: (one?.errors ?? 0) + (many?.errors ?? 0),
  };
}

export async function runAblation(base: BenchContext): Promise<void> {
  const counts = base.mode.ablation;
  const started = performance.now();
  const result: AblationResult = {
    ...{ operation: '', steps: 0, tuningSource: TUNING_SOURCE, counts, rows: [], skipped: [] },
    settings: DEV_SERVER_TUNING.map(({ name, args, why }) => ({ name, args, why })),
  };
  // The operation with the most steps: what the server's settings act on most.
  const op = operationsMeasured().sort((a, b) => b.activities - a.activities)[0]!;
  [result.operation, result.steps] = [op.own, op.activities];
  const plan = ablationPlan(DEV_SERVER_TUNING.map((s) => s.name));
  for (const [i, row] of plan.entries()) {
    if (performance.now() - started > counts.budgetMs) {
      result.skipped.push(row.name);
      continue;
    }
    base.log(`ablation ${i + 1}/${plan.length}: ${row.name}`);
    await onRowEngine(base, { folder: `ablation-${i}`, without: row.without }, async (stack) => {
      const ctx: BenchContext = {
        ...base,
        stack,
        accounting: new Accounting(stack.pids, base.http, [stack.urls.api]),
        finished: new Map(),
        charges: new Map(),
      };
      const run = (who: 'own' | 'bare', tag: string) =>
        who === 'own' ? newOperation(ctx, op.own, tag) : bareWorkflow(ctx, stack.client, op, tag);
      for (const who of ['own', 'bare'] as const)
        await closedLoop(counts.warmupOps, Math.min(4, counts.warmupOps), (n) => run(who, `abl${i}-warm`)(n), counts.batchMaxMs);
      const batches = { own: [[], []] as Batch[][], bare: [[], []] as Batch[][] };
      for (const [slot, c, n] of [
        [0, 1, counts.opsC1],
        [1, 32, counts.opsC32],
      ] as const) {
        // Alternating which goes first, so that drift during a row does not favour one side.
        for (const who of i % 2 === 0 ? (['own', 'bare'] as const) : (['bare', 'own'] as const)) {
          const kind = who === 'own' ? op.own : op.bare;
          batches[who][slot]!.push(await measured(ctx.accounting, kind, c, n, run(who, `abl${i}-c${c}`), counts.batchMaxMs));
        }
      }
      const [own, bare] = [figures(batches.own), figures(batches.bare)];
      base.log(
        `  ${op.own} c=1 p50 ${own.c1P50Ms.toFixed(1)} ms, c=32 ${own.c32OpsPerSec.toFixed(1)}/s; ` +
          `bare c=1 p50 ${bare.c1P50Ms.toFixed(1)} ms, c=32 ${bare.c32OpsPerSec.toFixed(1)}/s`,
      );
      result.rows.push({ ...row, argv: stack.temporal.argv, checkout: own, bare });
    });
  }
  base.results.ablation = result;
}
