// Contention: `requests` identical POSTs at once for one new key, per operation type and
// trial, and what they left behind: Temporal executions, claims the API won, the money moved
// on each account and the units taken of each SKU the request names (each trial has its own),
// and how many distinct outcomes the answers carried.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { operationRef } from '../../../workflows/identity.js';
import { httpClient, summarize, type HttpClient, type LatencySummary, type Tally } from '../load.js';
import type { Usage } from '../meter.js';
import { DEFINITIONS, openResources, resourcesOf, sampleRequest, submit, TENANT } from '../workload.js';
import { engine, overBudget, type BenchContext } from './context.js';

export interface ContentionTrial {
  type: string;
  key: string;
  requests: number;
  statuses: Record<string, number>;
  /** Answers without Idempotent-Replayed: the requests that started the operation. */
  winners: number;
  /** Executions of the workflow ID in Temporal's visibility store. */
  executions: number;
  /** Claims the API says it won (retrysafe_operations_started_total). */
  claimsWon: number;
  /** Movements of the first account the request names (balance moved ÷ amount), and units of its first SKU taken. */
  charges: number;
  unitsTaken: number | null;
  /** Every effect per resource: `account <id>` → balance moved ÷ amount, `sku <id>` → units taken ÷ quantity (1: once). */
  effects: Record<string, number>;
  /** 503 answers, each retried with the same key (as a client would). */
  retried503: number;
  /** Distinct outcomes the answers carried (1: everyone learned the same one). */
  distinctOutcomes: number;
  winnerLatencyMs: number;
  waiterLatencyMs: LatencySummary;
  /** Median waiter latency ÷ winner latency. */
  waiterOverWinner: number;
  usage: Usage;
}

const BALANCE = 1_000_000;
const STOCK = 1_000;

async function claimsWon(http: HttpClient, apiUrl: string, type: string): Promise<number> {
  const res = await http.send('GET', `${apiUrl}/metrics`);
  const line = res.text.split('\n').find((l) => l.startsWith(`retrysafe_operations_started_total{type="${type}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The executions of one workflow ID in visibility, once it has caught up with the one closed run there can be. */
async function countExecutions(client: Client, workflowId: string): Promise<number> {
  const query = `WorkflowId = '${workflowId}'`;
  let count = 0;
  for (let i = 0; i < 40; i++) {
    count = (await client.workflow.count(query)).count;
    if (count > 0 && (await client.workflow.count(`${query} AND ExecutionStatus != 'Running'`)).count === count) break;
    await sleep(250);
  }
  return count;
}

/** One trial: the burst, then what it left at Temporal, the API and the sandboxes. */
async function trial(
  ctx: BenchContext,
  burst: HttpClient,
  definition: (typeof DEFINITIONS)[number],
  t: number,
): Promise<ContentionTrial> {
  const { urls, client } = engine(ctx);
  const n = ctx.mode.contentionRequests;
  const type = definition.type;
  const key = `bench-${ctx.runId}-contention-${type}-${t}`;
  // The trial's own accounts and SKUs: what moved there is this key's doing alone.
  const body = sampleRequest(definition, `contention_${ctx.runId}_${type}_${t}`);
  const resources = resourcesOf(definition, body);
  await openResources(ctx.http, urls, resources, { balance: BALANCE, stock: STOCK });
  // Open the sockets first, so that the burst measures the API and not TCP handshakes.
  await Promise.all(Array.from({ length: n }, () => burst.send('GET', `${urls.api}/healthz`)));
  const claimsBefore = await claimsWon(ctx.http, urls.api, type);
  await sleep(300);
  const stop = await ctx.accounting.start();
  const tally: Tally = { answered202: 0, retried503: 0 };
  const answers = await Promise.all(
    Array.from({ length: n }, async () => {
      const t0 = performance.now();
      return { ...(await submit(burst, urls.api, type, key, body, tally)), ms: performance.now() - t0 };
    }),
  );
  const usage = await stop();
  const effects: Record<string, number> = {};
  const moves: number[] = [];
  for (const [account, { amount }] of resources.accounts) {
    const after = await ctx.http.json<{ balance: number }>('GET', `${urls.bank}/accounts/${encodeURIComponent(account)}`);
    moves.push((effects[`account ${account}`] = Math.abs(BALANCE - after.body.balance) / amount));
  }
  const units: number[] = [];
  for (const [sku, quantity] of resources.skus) {
    const inv = await ctx.http.json<{ available: number }>('GET', `${urls.reservations}/inventory/${encodeURIComponent(sku)}`);
    units.push(STOCK - inv.body.available);
    effects[`sku ${sku}`] = units.at(-1)! / quantity;
  }
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const winnerMs = answers.find((a) => !a.replayed)?.ms ?? Number.NaN;
  const waiters = summarize(answers.filter((a) => a.replayed).map((a) => a.ms));
  const outcomes = new Set(answers.map((a) => JSON.stringify([a.operation.status, a.operation.result, a.operation.error])));
  return {
    type,
    key,
    requests: n,
    statuses,
    winners: answers.filter((a) => !a.replayed).length,
    executions: await countExecutions(client, operationRef(TENANT, key).workflowId),
    claimsWon: (await claimsWon(ctx.http, urls.api, type)) - claimsBefore,
    charges: moves[0] ?? 0,
    unitsTaken: units[0] ?? null,
    effects,
    retried503: tally.retried503,
    distinctOutcomes: outcomes.size,
    winnerLatencyMs: winnerMs,
    waiterLatencyMs: waiters,
    waiterOverWinner: waiters.p50 / winnerMs,
    usage,
  };
}

export async function runContention(ctx: BenchContext): Promise<void> {
  // Its own sockets: all requests must be in flight together, not queued behind each other.
  const burst = httpClient(ctx.mode.contentionRequests);
  try {
    for (let t = 0; t < ctx.mode.contentionTrials; t++) {
      if (t > 0 && overBudget(ctx, ctx.mode.budget.contentionMs)) {
        ctx.skipped.push(`contention trials ${t + 1}–${ctx.mode.contentionTrials}`);
        break;
      }
      for (const definition of DEFINITIONS) {
        const r = await trial(ctx, burst, definition, t);
        const effects = Object.entries(r.effects).map(([what, k]) => `${what} ${k}`);
        ctx.log(
          `  contention ${r.type} trial ${t + 1}: executions ${r.executions}, effects ${effects.join(', ')}, winner ${r.winnerLatencyMs.toFixed(0)} ms, ` +
            `waiters p50 ${r.waiterLatencyMs.p50.toFixed(0)} ms (×${r.waiterOverWinner.toFixed(2)})${r.retried503 ? `, ${r.retried503} answers 503 retried` : ''}`,
        );
        ctx.results.contention.push(r);
      }
    }
  } finally {
    burst.close();
  }
}
