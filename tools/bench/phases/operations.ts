// New operations against bare Temporal, for every operation type the registry defines:
// retrysafe's operation through the API, next to bare workflows with as many no-op activities
// of the same kind (regular or local, as retrysafe's steps run: the engine's floor), and next
// to bare workflows making the operation's own keyed HTTP calls to the same sandboxes (the
// same work, without retrysafe's books); with --peers, next to the same checkout on Restate
// and on DBOS Transact through the same driver; in the full mode also the decomposition (the
// retrysafe workflows started without the API, the bare workflows with retrysafe's
// bookkeeping). Per concurrency the rounds alternate (ABBA), so drift on a shared machine
// lands on both sides of a ratio. Before anything is timed, one operation of each type runs
// end to end, and its history says which activity kind the baselines must use.
import type { Client } from '@temporalio/client';
import { programFor } from '../../../common/programs.js';
import { fingerprint } from '../../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../../client/api/start-options.js';
import { operationRef } from '../../../workflows/identity.js';
import type { BareHttpInput, BareInput, TrackedInput } from '../baseline/workflows.js';
import { closedLoop, measured, median, merge, type Batch, type ScenarioResult, type Tally } from '../load.js';
import { PEERS_BUDGET_FACTOR } from '../options.js';
import { PEER_OPERATION } from '../peers/contract.js';
import {
  definitionOf,
  DEFINITIONS,
  operationKinds,
  requestFor,
  submit,
  submitToPeer,
  TENANT,
  type OperationKinds,
} from '../workload.js';
import { bareWorkflowType, engine, finish, overBudget, type BenchContext, type PeerTarget } from './context.js';
import { recordedActivityKind } from './histories.js';

/** The API's defaults, as a workflow it starts gets them. */
const SETTINGS = { stepDeadlineMs: 60_000, attentionAfterMs: 300_000 };

/** The kinds measured for each operation type, in the registry's order. */
export const operationsMeasured = (): OperationKinds[] => DEFINITIONS.map(operationKinds);

type Op = (i: number, tally?: Tally) => Promise<void>;

/** A new operation of `type` through the API, which must succeed. */
export function newOperation(ctx: BenchContext, type: string, tag: string): Op {
  return async (i, tally) => {
    const key = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    const { operation } = await submit(ctx.http, engine(ctx).urls.api, type, key, requestFor(type), tally);
    if (operation.status !== 'succeeded') throw new Error(`${key}: ${JSON.stringify(operation.error ?? operation.status)}`);
    finish(ctx, type, key);
    const chargeId = (operation.result as { chargeId?: string } | undefined)?.chargeId;
    if (chargeId) ctx.charges.set(`${type}:${key}`, chargeId);
  };
}

/** The same checkout on a peer, through the same HTTP client, body and key scheme. */
function peerCheckout(ctx: BenchContext, target: PeerTarget, tag: string): Op {
  return async (i) => {
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
  const started = { type, fingerprint: fingerprint(type, request), request };
  const definition = definitionOf(type);
  return workflowStartOptions(definition, programFor(definition), operationRef(TENANT, key), started, SETTINGS, taskQueue);
}

/** A bare workflow of `workflowType` on the baseline queue, awaited; `kind`'s finished list records it. */
const bareRun = (ctx: BenchContext, client: Client, kind: string, workflowType: string, workflowId: string, input: unknown) =>
  client.workflow
    .execute(workflowType, { taskQueue: engine(ctx).taskQueues.baseline, workflowId, args: [input] })
    .then(() => finish(ctx, kind, workflowId));

/** A bare workflow with `op`'s number of no-op activities. */
export function bareWorkflow(
  ctx: BenchContext,
  client: Client,
  op: Pick<OperationKinds, 'bare' | 'activities'>,
  tag: string,
): Op {
  return async (i) => {
    const workflowId = `bench-${ctx.runId}-${op.bare}-${tag}-${i}`;
    const input: BareInput = { key: workflowId, steps: op.activities };
    await bareRun(ctx, client, op.bare, bareWorkflowType(ctx.activityKind, false), workflowId, input);
  };
}

/** The batches of a round for one operation type: the operation, the same work on bare Temporal, the floor (the decomposition, the peers). */
function batchesOf(ctx: BenchContext, client: Client, op: OperationKinds, tag: string, c: number, decompose: boolean) {
  const n = ctx.mode.ops[c]!;
  const queues = engine(ctx).taskQueues;
  const fair: Op = async (i) => {
    // The keys retrysafe would derive for an operation of this key (`<tenant>/<key>/<suffix>`).
    const ref = operationRef(TENANT, `bench-${ctx.runId}-${op.fair}-${tag}-${i}`);
    const input: BareHttpInput = {
      type: op.own,
      tenant: ref.tenant,
      key: ref.key,
      request: requestFor(op.own),
    };
    await bareRun(ctx, client, op.fair!, 'bareHttp', ref.workflowId, input);
  };
  // The retrysafe workflow from a Temporal client with the API's start options: the operation without the API.
  const direct: Op = async (i) => {
    const handle = await client.workflow.start(
      op.own,
      apiStart(op.own, `bench-${ctx.runId}-${op.direct}-${tag}-${i}`, queues.retrysafe),
    );
    const outcome = (await handle.result()) as { status?: string };
    if (outcome.status !== 'succeeded') throw new Error(`${handle.workflowId}: ${JSON.stringify(outcome)}`);
  };
  // A bare workflow plus retrysafe's memo and search-attribute bookkeeping, started as the API starts one.
  const tracked: Op = async (i) => {
    const start = apiStart(op.own, `bench-${ctx.runId}-${op.tracked}-${tag}-${i}`, queues.baseline);
    const input: TrackedInput = { key: start.workflowId, names: definitionOf(op.own).steps.map((s) => s.name) };
    await client.workflow.execute(bareWorkflowType(ctx.activityKind, true), { ...start, args: [input] });
    finish(ctx, op.tracked, start.workflowId);
  };
  const steps: Array<[string, Op, number]> = [
    [op.own, newOperation(ctx, op.own, tag), n],
    [op.fair!, fair, n],
    [op.bare, bareWorkflow(ctx, client, op, tag), n],
    ...(op.own === PEER_OPERATION
      ? ctx.peers.map((t): [string, Op, number] => [t.peer, peerCheckout(ctx, t, tag), ctx.mode.peerOps[c]!])
      : []),
    ...(decompose
      ? ([
          [op.direct, direct, n],
          [op.tracked, tracked, n],
        ] as Array<[string, Op, number]>)
      : []),
  ];
  return steps;
}

/**
 * One operation of each type end to end before anything is timed: the whole path works, and
 * their histories say which activity kind retrysafe's steps use, so that R1's no-op baseline
 * uses the same kind (or the one --activity-kind names).
 */
export async function probeActivityKind(ctx: BenchContext): Promise<void> {
  const stack = engine(ctx);
  const recorded = new Set<string>();
  for (const op of ctx.results.operations!) {
    const ref = operationRef(TENANT, `bench-${ctx.runId}-probe-${op.own}`);
    const probe = await submit(ctx.http, stack.urls.api, op.own, ref.key, requestFor(op.own));
    if (probe.operation.status !== 'succeeded')
      throw new Error(`probe ${op.own} did not succeed: ${JSON.stringify(probe.operation)}`);
    recorded.add(recordedActivityKind((await stack.client.workflow.getHandle(ref.workflowId).fetchHistory()).events ?? []));
  }
  const detected = recorded.size === 1 ? [...recorded][0]! : 'mixed';
  const asked = ctx.opts.activityKind;
  if (asked === 'auto' && detected !== 'regular' && detected !== 'local')
    throw new Error(
      `the probe operations' histories show ${[...recorded].join(', ')} activities: say which baseline R1 compares with (--activity-kind regular|local)`,
    );
  const used = asked === 'auto' ? (detected as 'regular' | 'local') : asked;
  const how =
    asked === 'auto'
      ? "read off the probe operations' histories"
      : `--activity-kind ${asked} (the probe operations' histories showed ${detected})`;
  ctx.activityKind = used;
  ctx.results.activityKind = { used, detected, how };
  ctx.log(`retrysafe's steps run as ${used} activities (${how}): the no-op baseline uses the same kind`);
}

/** A few of each kind at moderate concurrency (JIT, connections, worker caches); their keys are part of no sample. */
export async function warmUp(ctx: BenchContext): Promise<void> {
  const n = ctx.mode.warmupOps;
  for (const op of operationsMeasured()) {
    for (const [kind, run] of batchesOf(ctx, engine(ctx).client, op, 'warm', ctx.mode.concurrencies[0]!, ctx.mode.direct)) {
      const count = ctx.peers.some((t) => t.peer === kind) ? n * 4 : n;
      await closedLoop(count, Math.min(4, n), (i) => run(i), ctx.mode.batchMaxMs);
    }
  }
  ctx.finished.clear();
  ctx.charges.clear();
}

/** New operations and bare workflows, interleaved: per concurrency, rounds in ABBA order; the peers' operation first. */
export async function runNewOperations(ctx: BenchContext): Promise<void> {
  const client = engine(ctx).client;
  const ops = operationsMeasured().sort((a, b) => Number(b.own === PEER_OPERATION) - Number(a.own === PEER_OPERATION));
  const budgetMs = ctx.mode.budget.newOpsMs * (ctx.peers.length ? PEERS_BUDGET_FACTOR : 1);
  for (const c of ctx.mode.concurrencies) {
    const batches = new Map<string, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      // The decomposition (no API; bare + bookkeeping) runs once, in the first round.
      const plan = ops.flatMap((op) => batchesOf(ctx, client, op, `c${c}-r${round}`, c, ctx.mode.direct && round === 0));
      if (round % 2 === 1) plan.reverse();
      for (const [kind, op, count] of plan) {
        // A peer's batch is short and always runs, so that every verdict has its figures.
        if (overBudget(ctx, budgetMs) && !ctx.peers.some((t) => t.peer === kind)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx.accounting, kind, c, count, op, ctx.mode.batchMaxMs);
        const { ok, errors, wallMs, latenciesMs } = batch.result;
        ctx.log(
          `  ${kind.padEnd(18)} c=${String(c).padEnd(2)} round ${round + 1}: ${ok} ok${errors.length ? `, ${errors.length} errors` : ''}, ` +
            `${((ok / wallMs) * 1000).toFixed(1)}/s, p50 ${median(latenciesMs).toFixed(1)} ms`,
        );
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    const order = [
      ...operationsMeasured().flatMap((op) => [op.own, op.direct, op.tracked, op.bare, op.fair!]),
      ...ctx.peers.map((t) => t.peer),
    ];
    ctx.results.scenarios.push(
      ...order.flatMap((kind): ScenarioResult[] => (batches.has(kind) ? [merge(batches.get(kind)!)] : [])),
    );
  }
}
