// Replays: finished operations of the registry's first type (the one-step payment) POSTed
// again through the API (its cache, then a second API without one), against a plain
// Fastify endpoint answering a body of the same size; and finished checkouts POSTed again,
// retrysafe's and (with --peers) each peer's, each checked to answer the chargeId the first
// answer carried.
import { downstreamKey, operationRef } from '../../../workflows/identity.js';
import { PEER_OPERATION } from '../peers/contract.js';
import type { BenchContext } from './context.js';
import { finishedOf, overBudget, startPhase } from './context.js';
import { measured, merge, type Batch, type Kind, type ScenarioResult } from './measure.js';
import { definitionOf, DEFINITIONS, requestFor, submitToPeer, TENANT } from './workload.js';

/** The type whose replays R4 measures: the registry's first, whose resource the plain endpoint's body mimics. */
export const REPLAYED = DEFINITIONS[0]!;

/** A finished operation of the replayed type as the API answers it, for the plain endpoint to send back. */
export function samplePlainBody(): string {
  const key = 'bench-00000000-replayed-c1-r0-0';
  const { workflowId } = operationRef(TENANT, key);
  const last = REPLAYED.steps.at(-1)!;
  return JSON.stringify({
    key,
    type: REPLAYED.type,
    status: 'succeeded',
    step: last.name,
    createdAt: '2025-01-01T00:00:00.000Z',
    completedAt: '2025-01-01T00:00:00.100Z',
    steps: REPLAYED.steps.map((s) => ({
      name: s.name,
      status: 'completed',
      downstreamKey: downstreamKey(workflowId, s.keySuffix),
    })),
    needsAttention: false,
    links: {
      self: `/v1/operations/${key}`,
      temporalUi: `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
    },
    result: Object.fromEntries(
      REPLAYED.steps.flatMap((s) => Object.keys(s.result ?? {})).map((f) => [f, 'id_00000000000000000000000000']),
    ),
  });
}

export async function runReplays(ctx: BenchContext): Promise<ScenarioResult[]> {
  const keys = finishedOf(ctx, REPLAYED.type);
  if (keys.length === 0) throw new Error(`no finished ${REPLAYED.type} to replay`);
  startPhase(ctx);
  const body = JSON.stringify(requestFor(REPLAYED.type));
  const results: ScenarioResult[] = [];
  const replay = (apiUrl: string) => async (i: number) => {
    const key = keys[i % keys.length]!;
    const res = await ctx.http.send('POST', `${apiUrl}/v1/${REPLAYED.plural}`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body,
    });
    if (res.status !== 200 || res.headers['idempotent-replayed'] !== 'true') {
      throw new Error(`replay of ${key} → ${res.status} replayed=${String(res.headers['idempotent-replayed'])}`);
    }
  };
  const plain = async (i: number) => {
    const res = await ctx.http.send('POST', `${ctx.stack.urls.plain}/v1/${REPLAYED.plural}`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': keys[i % keys.length]! },
      body,
    });
    if (res.status !== 200) throw new Error(`plain → ${res.status}`);
  };
  const checkouts = requestFor(PEER_OPERATION);
  const checkoutKeys = finishedOf(ctx, PEER_OPERATION);
  const replayCheckout = async (i: number) => {
    const key = checkoutKeys[i % checkoutKeys.length]!;
    const res = await ctx.http.send('POST', `${ctx.stack.urls.api}/v1/${definitionOf(PEER_OPERATION).plural}`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(checkouts),
    });
    const chargeId =
      res.status === 200 ? (JSON.parse(res.text) as { result?: { chargeId?: string } }).result?.chargeId : undefined;
    if (res.headers['idempotent-replayed'] !== 'true' || chargeId !== ctx.charges.get(`${PEER_OPERATION}:${key}`))
      throw new Error(`checkout replay of ${key} → ${res.status} chargeId ${String(chargeId)}`);
  };
  const replayPeer = (target: BenchContext['peers'][number]) => {
    const peerKeys = finishedOf(ctx, target.peer);
    return async (i: number) => {
      const key = peerKeys[i % peerKeys.length]!;
      const outcome = await submitToPeer(ctx.http, target.checkoutUrl, key, checkouts);
      if (outcome.result?.chargeId !== ctx.charges.get(`${target.peer}:${key}`))
        throw new Error(`${target.peer} replay of ${key}: chargeId ${String(outcome.result?.chargeId)}`);
    };
  };
  for (const c of ctx.mode.concurrencies) {
    const batches = new Map<Kind, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      const plan: Array<[Kind, number, (i: number) => Promise<void>]> = [
        ['replay', ctx.mode.replays(c), replay(ctx.stack.urls.api)],
        ['plain', ctx.mode.replays(c), plain],
      ];
      const checkoutPlan: Array<[Kind, number, (i: number) => Promise<void>]> = [];
      if (checkoutKeys.length > 0) checkoutPlan.push([`replay-${PEER_OPERATION}`, ctx.mode.checkoutReplays(c), replayCheckout]);
      for (const target of ctx.peers) {
        if (finishedOf(ctx, target.peer).length > 0)
          checkoutPlan.push([`replay-${target.peer}`, ctx.mode.checkoutReplays(c), replayPeer(target)]);
      }
      plan.push(...checkoutPlan);
      if (round % 2 === 1) plan.reverse();
      if (ctx.stack.urls.apiNoCache)
        plan.push(['replay-uncached', ctx.mode.uncachedReplays(c), replay(ctx.stack.urls.apiNoCache)]);
      for (const [kind, n, op] of plan) {
        if (overBudget(ctx, ctx.mode.budget.replaysMs)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx, kind, c, n, op, ctx.mode.replayBatchMaxMs);
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    const order: Kind[] = [
      'replay',
      'plain',
      'replay-uncached',
      `replay-${PEER_OPERATION}`,
      ...ctx.peers.map((t) => `replay-${t.peer}`),
    ];
    for (const kind of order) {
      const b = batches.get(kind);
      if (b) {
        const merged = merge(b);
        ctx.log(
          `  ${kind.padEnd(15)} c=${String(c).padEnd(2)}: ${merged.opsPerSec.toFixed(0)}/s, p50 ${merged.latencyMs.p50.toFixed(2)} ms`,
        );
        results.push(merged);
      }
    }
  }
  return results;
}
