// New operations against bare Temporal: retrysafe payments and checkouts through the API,
// next to bare workflows with the same number of no-op activities of the same kind (regular
// or local, as retrysafe's steps run); with --peers, next to the same checkout on Restate
// and on DBOS Transact through the same driver; in the full mode also the decomposition,
// the retrysafe workflows started without the API and the bare workflows with retrysafe's
// bookkeeping. Per concurrency, the rounds alternate (ABBA), so drift on a shared machine
// lands on both sides of a ratio.
import type { Client } from '@temporalio/client';
import { fingerprint } from '../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../client/api/start-options.js';
import { DEFAULT_HOLD_TTL_SECONDS } from '../../client/api/config.js';
import type { OperationSettings } from '../../workflows/contracts.js';
import { builtInRegistry } from '../../workflows/registry.js';
import { operationRef } from '../../workflows/identity.js';
import { closedLoop } from '../load.js';
import { median } from '../stats.js';
import { PEERS_BUDGET_FACTOR } from '../modes.js';
import type { PeerName } from '../peers/index.js';
import { bareWorkflowType, overBudget, startPhase, type BenchContext, type PeerTarget } from './context.js';
import { measured, merge, type Batch, type Kind, type ScenarioResult } from './measure.js';
import { checkoutBody, paymentBody, submit, submitToPeer, TENANT, type Tally } from './workload.js';

/** The API's defaults, as a workflow it starts gets them. */
const SETTINGS: OperationSettings = {
  stepDeadlineMs: 60_000,
  attentionAfterMs: 300_000,
  holdTtlSeconds: DEFAULT_HOLD_TTL_SECONDS,
};

export function newOperation(ctx: BenchContext, type: 'payment' | 'checkout', tag: string) {
  return async (i: number, tally?: Tally) => {
    const key = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    const answer = await submit(
      ctx.http,
      ctx.stack.urls.api,
      type,
      key,
      type === 'payment' ? paymentBody() : checkoutBody(),
      tally,
    );
    if (answer.operation.status !== 'succeeded')
      throw new Error(`${key}: ${JSON.stringify(answer.operation.error ?? answer.operation.status)}`);
    ctx.finished[type].push(key);
    const chargeId = (answer.operation.result as { chargeId?: string } | undefined)?.chargeId;
    if (type === 'checkout' && chargeId) ctx.charges.set(`checkout:${key}`, chargeId);
  };
}

/** The same checkout on a peer, through the same HTTP client, body and key scheme. */
export function peerCheckout(ctx: BenchContext, target: PeerTarget, tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${target.peer}-${tag}-${i}`;
    const outcome = await submitToPeer(ctx.http, target.checkoutUrl, key, checkoutBody());
    if (outcome.status !== 'succeeded' || !outcome.result?.chargeId) throw new Error(`${key}: ${JSON.stringify(outcome)}`);
    ctx.finished[target.peer].push(key);
    ctx.charges.set(`${target.peer}:${key}`, outcome.result.chargeId);
  };
}

/** How the API starts the operation of `key` (its start options, verbatim). */
function apiStart(type: 'payment' | 'checkout', key: string, taskQueue: string) {
  const request: Record<string, unknown> = type === 'payment' ? paymentBody() : checkoutBody();
  return workflowStartOptions(
    builtInRegistry.get(type)!,
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
function directOperation(ctx: BenchContext, client: Client, type: 'payment' | 'checkout', tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${type}-direct-${tag}-${i}`;
    const handle = await client.workflow.start(type, apiStart(type, key, ctx.stack.taskQueues.retrysafe));
    const outcome = (await handle.result()) as { status?: string };
    if (outcome.status !== 'succeeded') throw new Error(`${key}: ${JSON.stringify(outcome)}`);
  };
}

/** A bare workflow plus retrysafe's memo and search-attribute bookkeeping, started as the API starts one. */
function trackedWorkflow(ctx: BenchContext, client: Client, type: 'bare1' | 'bare3', tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${type}-tracked-${tag}-${i}`;
    const start = apiStart(type === 'bare1' ? 'payment' : 'checkout', key, ctx.stack.taskQueues.baseline);
    await client.workflow.execute(bareWorkflowType(`${type}-tracked`, ctx.activityKind), {
      ...start,
      args: [{ key: start.workflowId }],
    });
    ctx.finished[`${type}-tracked`].push(start.workflowId);
  };
}

export function bareWorkflow(ctx: BenchContext, client: Client, type: 'bare1' | 'bare3', tag: string) {
  return async (i: number) => {
    const workflowId = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    await client.workflow.execute(bareWorkflowType(type, ctx.activityKind), {
      taskQueue: ctx.stack.taskQueues.baseline,
      workflowId,
      args: [{ key: workflowId }],
    });
    ctx.finished[type].push(workflowId);
  };
}

/** A few of each kind at moderate concurrency: JIT, connections, worker caches. */
export async function warmUp(ctx: BenchContext): Promise<void> {
  const n = ctx.mode.warmupOps;
  const c = Math.min(4, n);
  const client = ctx.stack.client;
  const max = ctx.mode.batchMaxMs;
  await closedLoop(n, c, (i) => newOperation(ctx, 'payment', 'warm')(i), max);
  await closedLoop(n, c, (i) => newOperation(ctx, 'checkout', 'warm')(i), max);
  await closedLoop(n, c, (i) => bareWorkflow(ctx, client, 'bare1', 'warm')(i), max);
  await closedLoop(n, c, (i) => bareWorkflow(ctx, client, 'bare3', 'warm')(i), max);
  if (ctx.mode.direct) {
    await closedLoop(n, c, (i) => directOperation(ctx, client, 'payment', 'warm')(i), max);
    await closedLoop(n, c, (i) => directOperation(ctx, client, 'checkout', 'warm')(i), max);
    await closedLoop(n, c, (i) => trackedWorkflow(ctx, client, 'bare1', 'warm')(i), max);
    await closedLoop(n, c, (i) => trackedWorkflow(ctx, client, 'bare3', 'warm')(i), max);
  }
  for (const target of ctx.peers) await closedLoop(n * 4, c, (i) => peerCheckout(ctx, target, 'warm')(i), max);
  // The warm-up's keys are not part of any sample.
  for (const k of Object.keys(ctx.finished) as (keyof BenchContext['finished'])[]) ctx.finished[k] = [];
  ctx.charges.clear();
}

/** New operations and bare workflows, interleaved: per concurrency, rounds in ABBA order. */
export async function runNewOperations(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const client = ctx.stack.client;
  startPhase(ctx);
  const budgetMs = ctx.mode.budget.newOpsMs * (ctx.peers.length ? PEERS_BUDGET_FACTOR : 1);
  for (const c of ctx.mode.concurrencies) {
    const n = ctx.mode.ops(c);
    const batches = new Map<Kind, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      const tag = `c${c}-r${round}`;
      type Step = [Kind, (i: number, tally: Tally) => Promise<void>, number];
      const payments: Step[] = [
        ['payment', newOperation(ctx, 'payment', tag), n],
        ['bare1', bareWorkflow(ctx, client, 'bare1', tag), n],
      ];
      const checkouts: Step[] = [
        ['checkout', newOperation(ctx, 'checkout', tag), n],
        ['bare3', bareWorkflow(ctx, client, 'bare3', tag), n],
        ...ctx.peers.map((t): Step => [t.peer, peerCheckout(ctx, t, tag), ctx.mode.peerOps(c)]),
      ];
      // The decomposition (no API; bare + bookkeeping) runs once, in the first round.
      if (ctx.mode.direct && round === 0) {
        payments.push(['payment-direct', directOperation(ctx, client, 'payment', tag), n]);
        payments.push(['bare1-tracked', trackedWorkflow(ctx, client, 'bare1', tag), n]);
        checkouts.push(['checkout-direct', directOperation(ctx, client, 'checkout', tag), n]);
        checkouts.push(['bare3-tracked', trackedWorkflow(ctx, client, 'bare3', tag), n]);
      }
      // Checkouts first: the verdicts against the peers are about them.
      const plan = [...checkouts, ...payments];
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
          `  ${kind.padEnd(9)} c=${String(c).padEnd(2)} round ${round + 1}: ${batch.result.ok} ok` +
            `${batch.result.errors.length ? `, ${batch.result.errors.length} errors` : ''}, ` +
            `${((batch.result.ok / batch.result.wallMs) * 1000).toFixed(1)}/s, p50 ${median(batch.result.latenciesMs).toFixed(1)} ms`,
        );
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    for (const kind of [
      'payment',
      'payment-direct',
      'bare1-tracked',
      'bare1',
      'checkout',
      'checkout-direct',
      'bare3-tracked',
      'bare3',
      ...ctx.peers.map((t): PeerName => t.peer),
    ] as Kind[]) {
      const b = batches.get(kind);
      if (b) results.push(merge(b));
    }
  }
  return results;
}
