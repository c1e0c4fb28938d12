// New operations against bare Temporal, for every operation type the registry defines:
// retrysafe's operation through the API, next to bare workflows with as many no-op
// activities of the same kind (regular or local, as retrysafe's steps run: the engine's
// floor), and next to bare workflows making the operation's own keyed HTTP calls to the
// same sandboxes (the same work, without retrysafe's books); with --peers, next to the
// same checkout on Restate and on DBOS Transact through the same driver; in the full mode
// also the decomposition, the retrysafe workflows started without the API and the bare
// workflows with retrysafe's bookkeeping. Per concurrency, the rounds alternate (ABBA), so
// drift on a shared machine lands on both sides of a ratio.
import type { Client } from '@temporalio/client';
import { fingerprint } from '../../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../../client/api/start-options.js';
import { programFor } from '../../../common/programs.js';
import type { OperationSettings } from '../../../workflows/contracts.js';
import { operationRef } from '../../../workflows/identity.js';
import { closedLoop } from '../load.js';
import { median } from '../stats.js';
import { PEERS_BUDGET_FACTOR } from '../modes.js';
import { PEER_OPERATION } from '../peers/contract.js';
import type { BareHttpInput, BareInput, TrackedInput } from '../baseline/workflows.js';
import { bareWorkflowType, finish, overBudget, startPhase, type BenchContext, type PeerTarget } from './context.js';
import { operationKinds, type OperationKinds } from './kinds.js';
import { measured, merge, type Batch, type Kind, type ScenarioResult } from './measure.js';
import { definitionOf, DEFINITIONS, requestFor, submit, submitToPeer, TENANT, type Tally } from './workload.js';

/** The API's defaults, as a workflow it starts gets them. */
const SETTINGS: OperationSettings = {
  stepDeadlineMs: 60_000,
  attentionAfterMs: 300_000,
};

/** The kinds measured for each operation type, in the registry's order. */
export function operationsMeasured(): OperationKinds[] {
  return DEFINITIONS.map(operationKinds);
}

export function newOperation(ctx: BenchContext, type: string, tag: string) {
  return async (i: number, tally?: Tally) => {
    const key = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    const answer = await submit(ctx.http, ctx.stack.urls.api, type, key, requestFor(type), tally);
    if (answer.operation.status !== 'succeeded')
      throw new Error(`${key}: ${JSON.stringify(answer.operation.error ?? answer.operation.status)}`);
    finish(ctx, type, key);
    const chargeId = (answer.operation.result as { chargeId?: string } | undefined)?.chargeId;
    if (chargeId) ctx.charges.set(`${type}:${key}`, chargeId);
  };
}

/** The same checkout on a peer, through the same HTTP client, body and key scheme. */
export function peerCheckout(ctx: BenchContext, target: PeerTarget, tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${target.peer}-${tag}-${i}`;
    const outcome = await submitToPeer(ctx.http, target.checkoutUrl, key, requestFor(PEER_OPERATION));
    if (outcome.status !== 'succeeded' || !outcome.result?.chargeId) throw new Error(`${key}: ${JSON.stringify(outcome)}`);
    finish(ctx, target.peer, key);
    ctx.charges.set(`${target.peer}:${key}`, outcome.result.chargeId);
  };
}

/** How the API starts the operation of `key` (its start options, verbatim). */
function apiStart(type: string, key: string, taskQueue: string) {
  const request = requestFor(type);
  return workflowStartOptions(
    definitionOf(type),
    programFor(definitionOf(type)),
    operationRef(TENANT, key),
    { type, fingerprint: fingerprint(type, request), request },
    SETTINGS,
    taskQueue,
  );
}

/**
 * The retrysafe workflow started straight from a Temporal client with the API's start
 * options (memo, search attributes, REJECT_DUPLICATE), then its result awaited: the
 * operation without the HTTP API, to tell the API's share of the cost from the rest.
 */
function directOperation(ctx: BenchContext, client: Client, type: string, tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${type}-direct-${tag}-${i}`;
    const handle = await client.workflow.start(type, apiStart(type, key, ctx.stack.taskQueues.retrysafe));
    const outcome = (await handle.result()) as { status?: string };
    if (outcome.status !== 'succeeded') throw new Error(`${key}: ${JSON.stringify(outcome)}`);
  };
}

/** A bare workflow plus retrysafe's memo and search-attribute bookkeeping, started as the API starts one. */
function trackedWorkflow(ctx: BenchContext, client: Client, op: OperationKinds, tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${op.tracked}-${tag}-${i}`;
    const start = apiStart(op.own, key, ctx.stack.taskQueues.baseline);
    const input: TrackedInput = { key: start.workflowId, names: definitionOf(op.own).steps.map((s) => s.name) };
    await client.workflow.execute(bareWorkflowType(ctx.activityKind, true), { ...start, args: [input] });
    finish(ctx, op.tracked, start.workflowId);
  };
}

/** A bare workflow with `op`'s number of no-op activities. */
export function bareWorkflow(ctx: BenchContext, client: Client, op: Pick<OperationKinds, 'bare' | 'activities'>, tag: string) {
  return async (i: number) => {
    const workflowId = `bench-${ctx.runId}-${op.bare}-${tag}-${i}`;
    const input: BareInput = { key: workflowId, steps: op.activities };
    await client.workflow.execute(bareWorkflowType(ctx.activityKind, false), {
      taskQueue: ctx.stack.taskQueues.baseline,
      workflowId,
      args: [input],
    });
    finish(ctx, op.bare, workflowId);
  };
}

/**
 * The fair baseline: a bare workflow making `op`'s own calls with the keys retrysafe would
 * derive for an operation of this key (`<tenant>/<key>/<suffix>`), started like the other
 * bare workflows (no memo, no search attributes) and its result awaited.
 */
function fairWorkflow(ctx: BenchContext, client: Client, op: OperationKinds, tag: string) {
  const kind = op.fair!;
  return async (i: number) => {
    const ref = operationRef(TENANT, `bench-${ctx.runId}-${kind}-${tag}-${i}`);
    const input: BareHttpInput = {
      type: op.own,
      tenant: ref.tenant,
      key: ref.key,
      request: requestFor(op.own),
    };
    await client.workflow.execute('bareHttp', {
      taskQueue: ctx.stack.taskQueues.baseline,
      workflowId: ref.workflowId,
      args: [input],
    });
    finish(ctx, kind, ref.workflowId);
  };
}

type Step = [Kind, (i: number, tally: Tally) => Promise<void>, number];

/** One operation's batches of a round: the operation, the same work on bare Temporal, the floor (and the decomposition, the peers). */
function batchesOf(ctx: BenchContext, client: Client, op: OperationKinds, tag: string, n: number, c: number, decompose: boolean) {
  const steps: Step[] = [
    [op.own, newOperation(ctx, op.own, tag), n],
    [op.fair!, fairWorkflow(ctx, client, op, tag), n],
    [op.bare, bareWorkflow(ctx, client, op, tag), n],
  ];
  if (op.own === PEER_OPERATION)
    steps.push(...ctx.peers.map((t): Step => [t.peer, peerCheckout(ctx, t, tag), ctx.mode.peerOps(c)]));
  if (decompose) {
    steps.push([op.direct, directOperation(ctx, client, op.own, tag), n]);
    steps.push([op.tracked, trackedWorkflow(ctx, client, op, tag), n]);
  }
  return steps;
}

/** The operation the peers race first: the verdicts against them are about it. */
function peersFirst(ops: OperationKinds[]): OperationKinds[] {
  return [...ops.filter((o) => o.own === PEER_OPERATION), ...ops.filter((o) => o.own !== PEER_OPERATION)];
}

/** A few of each kind at moderate concurrency: JIT, connections, worker caches. */
export async function warmUp(ctx: BenchContext): Promise<void> {
  const n = ctx.mode.warmupOps;
  const c = Math.min(4, n);
  const client = ctx.stack.client;
  const max = ctx.mode.batchMaxMs;
  for (const op of operationsMeasured()) {
    for (const [kind, run] of batchesOf(ctx, client, op, 'warm', n, c, ctx.mode.direct)) {
      const count = ctx.peers.some((t) => t.peer === kind) ? n * 4 : n;
      await closedLoop(count, c, (i) => run(i, { answered202: 0, retried503: 0 }), max);
    }
  }
  // The warm-up's keys are not part of any sample.
  ctx.finished.clear();
  ctx.charges.clear();
}

/** New operations and bare workflows, interleaved: per concurrency, rounds in ABBA order. */
export async function runNewOperations(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const client = ctx.stack.client;
  const ops = operationsMeasured();
  startPhase(ctx);
  const budgetMs = ctx.mode.budget.newOpsMs * (ctx.peers.length ? PEERS_BUDGET_FACTOR : 1);
  for (const c of ctx.mode.concurrencies) {
    const n = ctx.mode.ops(c);
    const batches = new Map<Kind, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      const tag = `c${c}-r${round}`;
      // The decomposition (no API; bare + bookkeeping) runs once, in the first round.
      const plan = peersFirst(ops).flatMap((op) => batchesOf(ctx, client, op, tag, n, c, ctx.mode.direct && round === 0));
      if (round % 2 === 1) plan.reverse();
      for (const [kind, op, count] of plan) {
        // A peer's batch is short (its count is done in a fraction of retrysafe's, and the
        // batch's time bound holds): it always runs, so that every verdict has its figures.
        if (overBudget(ctx, budgetMs) && !ctx.peers.some((t) => t.peer === kind)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx, kind, c, count, op);
        ctx.log(
          `  ${kind.padEnd(18)} c=${String(c).padEnd(2)} round ${round + 1}: ${batch.result.ok} ok` +
            `${batch.result.errors.length ? `, ${batch.result.errors.length} errors` : ''}, ` +
            `${((batch.result.ok / batch.result.wallMs) * 1000).toFixed(1)}/s, p50 ${median(batch.result.latenciesMs).toFixed(1)} ms`,
        );
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    const order = [...ops.flatMap((op) => [op.own, op.direct, op.tracked, op.bare, op.fair!]), ...ctx.peers.map((t) => t.peer)];
    for (const kind of new Set(order)) {
      const b = batches.get(kind);
      if (b) results.push(merge(b));
    }
  }
  return results;
}
