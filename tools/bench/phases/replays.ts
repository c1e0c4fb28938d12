// Replays: finished operations of the registry's first type (the one-step payment) POSTed
// again through the API (its cache, then a second API without one), against a plain Fastify
// endpoint answering a body of the same size; and finished checkouts POSTed again,
// retrysafe's and (with --peers) each peer's, each checked to answer the chargeId its first
// answer carried.
import { downstreamKey, operationRef } from '../../../workflows/identity.js';
import { measured, merge, type Batch } from '../load.js';
import { PEER_OPERATION } from '../peers/contract.js';
import { definitionOf, DEFINITIONS, requestFor, submitToPeer, TENANT } from '../workload.js';
import { engine, finishedOf, overBudget, type BenchContext } from './context.js';

/** The type whose replays R4 measures: the registry's first, whose resource the plain endpoint's body mimics. */
const REPLAYED = DEFINITIONS[0]!;

/** A finished operation of the replayed type as the API answers it, for the plain endpoint to send back. */
export function samplePlainBody(): string {
  const key = 'bench-00000000-replayed-c1-r0-0';
  const { workflowId } = operationRef(TENANT, key);
  return JSON.stringify({
    key,
    type: REPLAYED.type,
    status: 'succeeded',
    step: REPLAYED.steps.at(-1)!.name,
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

type Replay = [kind: string, count: (c: number) => number, op: (i: number) => Promise<void>];

/** The replay batches of a round: payments (cached, plain), finished checkouts (ours and the peers'); the uncached API's last. */
function plan(ctx: BenchContext): { alternating: Replay[]; last: Replay[] } {
  const { urls } = engine(ctx);
  const keys = finishedOf(ctx, REPLAYED.type);
  if (keys.length === 0) throw new Error(`no finished ${REPLAYED.type} to replay`);
  const body = JSON.stringify(requestFor(REPLAYED.type));
  const post = (url: string, key: string, json: string) =>
    ctx.http.send('POST', url, { headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: json });
  const replay = (apiUrl: string) => async (i: number) => {
    const res = await post(`${apiUrl}/v1/${REPLAYED.plural}`, keys[i % keys.length]!, body);
    if (res.status !== 200 || res.headers['idempotent-replayed'] !== 'true')
      throw new Error(
        `replay of ${keys[i % keys.length]} → ${res.status} replayed=${String(res.headers['idempotent-replayed'])}`,
      );
  };
  const plain = async (i: number) => {
    const res = await post(`${urls.plain}/v1/${REPLAYED.plural}`, keys[i % keys.length]!, body);
    if (res.status !== 200) throw new Error(`plain → ${res.status}`);
  };
  const checkouts = JSON.stringify(requestFor(PEER_OPERATION));
  /** A finished checkout of `system` (ours, or a peer's) again: the same chargeId it first answered. */
  const checkout = (system: string, send: (key: string) => Promise<string | undefined>): Replay[] => {
    const finished = finishedOf(ctx, system);
    if (finished.length === 0) return [];
    const op = async (i: number) => {
      const key = finished[i % finished.length]!;
      const chargeId = await send(key);
      if (chargeId !== ctx.charges.get(`${system}:${key}`))
        throw new Error(`${system} replay of ${key}: chargeId ${String(chargeId)}`);
    };
    return [[`replay-${system}`, (c) => ctx.mode.checkoutReplays[c]!, op]];
  };
  const ours = async (key: string) => {
    const res = await post(`${urls.api}/v1/${definitionOf(PEER_OPERATION).plural}`, key, checkouts);
    const replayed = res.status === 200 && res.headers['idempotent-replayed'] === 'true';
    return replayed ? (JSON.parse(res.text) as { result?: { chargeId?: string } }).result?.chargeId : `answer ${res.status}`;
  };
  return {
    alternating: [
      ['replay', (c) => ctx.mode.replays[c]!, replay(urls.api)],
      ['plain', (c) => ctx.mode.replays[c]!, plain],
      ...checkout(PEER_OPERATION, ours),
      ...ctx.peers.flatMap((t) =>
        checkout(
          t.peer,
          async (key) => (await submitToPeer(ctx.http, t.checkoutUrl, key, requestFor(PEER_OPERATION))).result?.chargeId,
        ),
      ),
    ],
    last: urls.apiNoCache ? [['replay-uncached', (c) => ctx.mode.uncachedReplays[c]!, replay(urls.apiNoCache)]] : [],
  };
}

export async function runReplays(ctx: BenchContext): Promise<void> {
  const { alternating, last } = plan(ctx);
  const order = ['replay', 'plain', 'replay-uncached', `replay-${PEER_OPERATION}`, ...ctx.peers.map((t) => `replay-${t.peer}`)];
  for (const c of ctx.mode.concurrencies) {
    const batches = new Map<string, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      for (const [kind, count, op] of [...(round % 2 === 1 ? [...alternating].reverse() : alternating), ...last]) {
        if (overBudget(ctx, ctx.mode.budget.replaysMs)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx.accounting, kind, c, count(c), op, ctx.mode.replayBatchMaxMs);
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    for (const kind of order.filter((k) => batches.has(k))) {
      const merged = merge(batches.get(kind)!);
      ctx.log(
        `  ${kind.padEnd(15)} c=${String(c).padEnd(2)}: ${merged.opsPerSec.toFixed(0)}/s, p50 ${merged.latencyMs.p50.toFixed(2)} ms`,
      );
      ctx.results.scenarios.push(merged);
    }
  }
}
