// After the timed scenarios, from the histories of what they finished: the state
// transitions, events and bytes of each kind (a sample spread over the run), and where
// the time of an execution went at the lowest concurrency (tools/bench/timeline.ts).
import { operationRef } from '../../../workflows/identity.js';
import { timelineOf, type Timeline } from '../timeline.js';
import { historyCost, type HistoryCost } from '../transitions.js';
import { finishedOf, type BenchContext } from './context.js';
import type { OperationKinds } from './kinds.js';
import { TENANT } from './workload.js';

export async function readHistories(
  ctx: BenchContext,
  operations: OperationKinds[],
): Promise<{ history: HistoryCost[]; timeline: Timeline[] }> {
  const { stack, mode } = ctx;
  // Operations through the API are recorded by key; everything else by workflow ID.
  const owns = new Set(operations.map((o) => o.own));
  const ids = (kind: string) =>
    owns.has(kind) ? finishedOf(ctx, kind).map((k) => operationRef(TENANT, k).workflowId) : finishedOf(ctx, kind);
  const history: HistoryCost[] = [];
  const historyKinds = [
    ...operations.map((o) => o.own),
    ...operations.map((o) => o.fair!),
    ...operations.map((o) => o.bare),
    ...operations.map((o) => o.tracked),
  ];
  for (const kind of new Set(historyKinds)) {
    if (ids(kind).length > 0) history.push(await historyCost(stack.client, kind, ids(kind), mode.transitionSample));
  }
  const timeline: Timeline[] = [];
  const lowest = `-c${Math.min(...mode.concurrencies)}-`;
  const bySteps = [...operations].sort((a, b) => b.activities - a.activities);
  for (const kind of new Set(bySteps.flatMap((o) => [o.own, o.bare, o.fair!]))) {
    const sample = ids(kind).filter((id) => id.includes(lowest));
    if (sample.length > 0) timeline.push(await timelineOf(stack.client, kind, sample, mode.timelineSample));
  }
  return { history, timeline };
}
