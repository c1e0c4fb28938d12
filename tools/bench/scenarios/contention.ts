// Contention: `requests` identical POSTs at once for one new key, per operation type and
// trial, and what they left behind: Temporal executions, claims the API won, the money
// moved on each account and the units taken of each SKU the request names, and how many
// distinct outcomes the answers carried.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { operationRef } from '../../../workflows/identity.js';
import { httpClient, type HttpClient } from '../http.js';
import { summarize, type LatencySummary } from '../stats.js';
import type { Usage } from '../accounting.js';
import { overBudget, startPhase, type BenchContext } from './context.js';
import { resourcesOf, sampleRequest } from './requests.js';
import { DEFINITIONS, openResources, submit, TENANT, type Tally } from './workload.js';

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
  /** Movements of the first account the request names (balance moved ÷ amount): the charges or debits. */
  charges: number;
  /** Units of the first SKU the request names taken (reservations); null when it names none. */
  unitsTaken: number | null;
  /**
   * Every effect the key caused, per resource the request names: `account <id>` → balance
   * moved ÷ amount, `sku <id>` → units taken ÷ the quantity held (each 1 when exactly once).
   * Absent from runs before it was recorded.
   */
  effects?: Record<string, number>;
  /** 503 engine_unavailable answers, each retried with the same key (as a client would). */
  retried503: number;
  /** Distinct outcomes the 100 answers carried (1: everyone learned the same one). */
  distinctOutcomes: number;
  winnerLatencyMs: number;
  waiterLatencyMs: LatencySummary;
  /** Median waiter latency ÷ winner latency. */
  waiterOverWinner: number;
  usage: Usage;
}

async function claimsWon(http: HttpClient, apiUrl: string, type: string): Promise<number> {
  const res = await http.send('GET', `${apiUrl}/metrics`);
  const line = res.text.split('\n').find((l) => l.startsWith(`retrysafe_operations_started_total{type="${type}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Counts the executions of one workflow ID in visibility, waiting for it to catch up. */
async function countExecutions(client: Client, workflowId: string): Promise<number> {
  const query = `WorkflowId = '${workflowId}'`;
  let count = 0;
  for (let i = 0; i < 40; i++) {
    count = (await client.workflow.count(query)).count;
    // Closed and visible: visibility has caught up with the one run there can be.
    if (count > 0 && (await client.workflow.count(`${query} AND ExecutionStatus != 'Running'`)).count === count) break;
    await sleep(250);
  }
  return count;
}

export async function runContention(ctx: BenchContext): Promise<ContentionTrial[]> {
  const trials: ContentionTrial[] = [];
  const { bank, reservations, api } = ctx.stack.urls;
  const n = ctx.mode.contentionRequests;
  // Its own sockets: all requests must be in flight together, not queued behind each other.
  const burst = httpClient(n);
  startPhase(ctx);
  try {
    for (let t = 0; t < ctx.mode.contentionTrials; t++) {
      if (t > 0 && overBudget(ctx, ctx.mode.budget.contentionMs)) {
        ctx.skipped.push(`contention trials ${t + 1}–${ctx.mode.contentionTrials}`);
        break;
      }
      for (const definition of DEFINITIONS) {
        const type = definition.type;
        const key = `bench-${ctx.runId}-contention-${type}-${t}`;
        // The trial's own accounts and SKUs: what moved there is this key's doing alone.
        const body = sampleRequest(definition, `contention_${ctx.runId}_${type}_${t}`);
        const resources = resourcesOf(definition, body);
        const balance = 1_000_000;
        const stock = 1_000;
        await openResources(ctx.http, { bank, reservations }, resources, { balance, stock });
        // Open the sockets first, so that the burst measures the API and not TCP handshakes.
        await Promise.all(Array.from({ length: n }, () => burst.send('GET', `${api}/healthz`)));
        const claimsBefore = await claimsWon(ctx.http, api, type);
        await sleep(300);
        const stop = await ctx.accounting.start();
        const tally: Tally = { answered202: 0, retried503: 0 };
        const answers = await Promise.all(
          Array.from({ length: n }, async () => {
            const t0 = performance.now();
            const answer = await submit(burst, api, type, key, body, tally);
            return { ...answer, ms: performance.now() - t0 };
          }),
        );
        const usage = await stop();
        const statuses: Record<string, number> = {};
        for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
        const winners = answers.filter((a) => !a.replayed);
        const waiters = answers.filter((a) => a.replayed).map((a) => a.ms);
        const { workflowId } = operationRef(TENANT, key);
        const executions = await countExecutions(ctx.stack.client, workflowId);
        const effects: Record<string, number> = {};
        const moves: number[] = [];
        for (const [account, { amount }] of resources.accounts) {
          const after = await ctx.http.json<{ balance: number }>('GET', `${bank}/accounts/${encodeURIComponent(account)}`);
          moves.push(Math.abs(balance - after.body.balance) / amount);
          effects[`account ${account}`] = moves.at(-1)!;
        }
        const units: number[] = [];
        for (const [sku, quantity] of resources.skus) {
          const inv = await ctx.http.json<{ available: number }>('GET', `${reservations}/inventory/${encodeURIComponent(sku)}`);
          units.push(stock - inv.body.available);
          effects[`sku ${sku}`] = units.at(-1)! / quantity;
        }
        const charges = moves[0] ?? 0;
        const unitsTaken = units[0] ?? null;
        const outcomes = new Set(
          answers.map((a) => JSON.stringify({ s: a.operation.status, r: a.operation.result, e: a.operation.error })),
        );
        const winnerMs = winners[0]?.ms ?? Number.NaN;
        const waiterSummary = summarize(waiters);
        const trial: ContentionTrial = {
          type,
          key,
          requests: n,
          statuses,
          winners: winners.length,
          executions,
          claimsWon: (await claimsWon(ctx.http, api, type)) - claimsBefore,
          charges,
          unitsTaken,
          effects,
          retried503: tally.retried503,
          distinctOutcomes: outcomes.size,
          winnerLatencyMs: winnerMs,
          waiterLatencyMs: waiterSummary,
          waiterOverWinner: waiterSummary.p50 / winnerMs,
          usage,
        };
        ctx.log(
          `  contention ${type} trial ${t + 1}: executions ${executions}, effects ` +
            `${Object.entries(effects)
              .map(([what, k]) => `${what} ${k}`)
              .join(', ')}, winner ${winnerMs.toFixed(0)} ms, ` +
            `waiters p50 ${waiterSummary.p50.toFixed(0)} ms (×${trial.waiterOverWinner.toFixed(2)})` +
            `${tally.retried503 ? `, ${tally.retried503} answers 503 retried` : ''}`,
        );
        trials.push(trial);
      }
    }
  } finally {
    burst.close();
  }
  return trials;
}
