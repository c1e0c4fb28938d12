// The scenarios of a run. Each measures closed-loop batches and what they cost every
// process; the rounds of one scenario alternate in order with its baseline, so drift on
// a shared machine lands on both sides of a ratio.
import type { Client } from '@temporalio/client';
import { DEFAULT_HOLD_TTL_SECONDS } from '../client/api/config.js';
import { fingerprint } from '../client/api/fingerprint.js';
import { SearchAttributes, type OperationInput, type StartMemo } from '../workflows/contracts.js';
import { addUsage, type Accounting, type Usage } from './accounting.js';
import type { HttpClient } from './http.js';
import { httpClient } from './http.js';
import { closedLoop, type BatchResult } from './load.js';
import type { Mode } from './modes.js';
import type { Stack } from './stack.js';
import { median, summarize, type LatencySummary } from './stats.js';

export type Kind =
  | 'payment'
  | 'checkout'
  | 'bare1'
  | 'bare3'
  | 'payment-direct'
  | 'checkout-direct'
  | 'bare1-tracked'
  | 'bare3-tracked'
  | 'replay'
  | 'replay-uncached'
  | 'plain';

export interface ScenarioResult {
  kind: Kind;
  concurrency: number;
  ops: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  opsPerSec: number;
  latencyMs: LatencySummary;
  /** Every latency sample in ms, rounded to 0.01 ms (for the chart and re-analysis). */
  samplesMs: number[];
  usage: Usage;
  /** POSTs answered 202 (the wait ended first), then polled to the end. */
  answered202: number;
  /** POSTs answered 503 engine_unavailable, retried with the same key after Retry-After. */
  retried503: number;
  /** Mean latency from throughput (Little's law: concurrency × wall ÷ n), immune to a coarse clock. */
  littleMeanMs: number;
  /** Steady-state rate of the closed loop: concurrency ÷ mean latency (Little's law). */
  steadyOpsPerSec: number;
  /** Batches the time bound ended before their count. */
  batchesCappedByTime: number;
  /** Samples ≤ 0 ms: the clock did not advance across a round trip (a VM clock under load). */
  nonPositiveSamples: number;
}

export interface BenchContext {
  stack: Stack;
  mode: Mode;
  runId: string;
  http: HttpClient;
  accounting: Accounting;
  log: (line: string) => void;
  /** performance.now() at the start of the run, for the mode's time budget. */
  startedAt: number;
  /** Batches and trials left out because the time budget ran out. */
  skipped: string[];
  /** Keys (retrysafe) and workflow IDs (bare) of finished operations, by kind. */
  finished: Record<'payment' | 'checkout' | 'bare1' | 'bare3' | 'bare1-tracked' | 'bare3-tracked', string[]>;
}

export const ACCOUNT = 'acc_bench';
export const SKU = 'sku_bench';
export const AMOUNT = 100;
export const TENANT = 'default';

export function paymentBody(account = ACCOUNT) {
  return { account, amount: AMOUNT, currency: 'EUR' };
}

export function checkoutBody(account = ACCOUNT, sku = SKU) {
  return { account, amount: AMOUNT, currency: 'EUR', items: [{ sku, quantity: 1 }] };
}

/** Opens the bench account and stocks the bench SKU, far beyond what a run uses. */
export async function seedSandboxes(ctx: { stack: Stack; http: HttpClient }): Promise<void> {
  const { bank, reservations } = ctx.stack.urls;
  const a = await ctx.http.json('POST', `${bank}/accounts`, { id: ACCOUNT, currency: 'EUR', balance: 1_000_000_000_000 });
  if (a.status !== 201) throw new Error(`POST /accounts → ${a.status}`);
  const s = await ctx.http.json('PUT', `${reservations}/inventory/${SKU}`, { available: 1_000_000_000 });
  if (s.status >= 300) throw new Error(`PUT /inventory → ${s.status}`);
}

export interface Tally {
  answered202: number;
  retried503: number;
}

interface Answer {
  status: number;
  replayed: boolean;
  operation: Record<string, unknown>;
}

/**
 * What a client does: POST; on 503 engine_unavailable retry the same request after
 * Retry-After (the key makes that safe); on 202 GET the operation until it is terminal.
 */
export async function submit(
  http: HttpClient,
  apiUrl: string,
  type: 'payment' | 'checkout',
  key: string,
  body: unknown,
  tally?: Tally,
): Promise<Answer> {
  const path = type === 'payment' ? '/v1/payments' : '/v1/checkouts';
  const deadline = Date.now() + 60_000;
  let res;
  for (;;) {
    res = await http.send('POST', apiUrl + path, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    if (res.status !== 503 || Date.now() > deadline) break;
    if (tally) tally.retried503++;
    await new Promise((r) => setTimeout(r, Number(res!.headers['retry-after'] ?? 1) * 1000));
  }
  const replayed = res.headers['idempotent-replayed'] === 'true';
  if (res.status !== 200 && res.status !== 202) throw new Error(`POST ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  if (res.status === 202 && tally) tally.answered202++;
  let operation = JSON.parse(res.text) as Record<string, unknown>;
  while (operation.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
    await new Promise((r) => setTimeout(r, 50));
    const poll = await http.send('GET', `${apiUrl}/v1/operations/${encodeURIComponent(key)}`);
    if (poll.status !== 200) throw new Error(`GET operation → ${poll.status}`);
    operation = JSON.parse(poll.text) as Record<string, unknown>;
  }
  return { status: res.status, replayed, operation };
}

interface Batch {
  kind: Kind;
  concurrency: number;
  result: BatchResult;
  usage: Usage;
  tally: Tally;
}

async function measured(
  ctx: BenchContext,
  kind: Kind,
  concurrency: number,
  total: number,
  op: (i: number, tally: Tally) => Promise<void>,
  maxMs = ctx.mode.batchMaxMs,
): Promise<Batch> {
  const tally: Tally = { answered202: 0, retried503: 0 };
  // Let the previous batch's tail (visibility, timers) settle before the meter starts.
  await new Promise((r) => setTimeout(r, 300));
  const stop = await ctx.accounting.start();
  const result = await closedLoop(total, concurrency, (i) => op(i, tally), maxMs);
  const usage = await stop();
  return { kind, concurrency, result, usage, tally };
}

function newOperation(ctx: BenchContext, type: 'payment' | 'checkout', tag: string) {
  return async (i: number, tally?: Tally) => {
    const key = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    const answer = await submit(ctx.http, ctx.stack.urls.api, type, key, type === 'payment' ? paymentBody() : checkoutBody(), tally);
    if (answer.operation.status !== 'succeeded') throw new Error(`${key}: ${JSON.stringify(answer.operation.error ?? answer.operation.status)}`);
    ctx.finished[type].push(key);
  };
}

/**
 * The retrysafe workflow started straight from a Temporal client with the API's start
 * options (memo, search attributes, REJECT_DUPLICATE), then its result awaited: the
 * operation without the HTTP API, to tell the API's share of the cost from the rest.
 */
function directOperation(ctx: BenchContext, client: Client, type: 'payment' | 'checkout', tag: string) {
  return async (i: number) => {
    const key = `bench-${ctx.runId}-${type}-direct-${tag}-${i}`;
    const request: Record<string, unknown> = type === 'payment' ? paymentBody() : checkoutBody();
    const input: OperationInput<Record<string, unknown>> = {
      tenant: TENANT,
      key,
      request,
      settings: { stepDeadlineMs: 60_000, attentionAfterMs: 300_000, holdTtlSeconds: DEFAULT_HOLD_TTL_SECONDS },
    };
    const handle = await client.workflow.start(type, {
      taskQueue: ctx.stack.taskQueues.retrysafe,
      workflowId: `${TENANT}/${key}`,
      args: [input],
      ...apiStartOptions(type, key, request),
    });
    const outcome = (await handle.result()) as { status?: string };
    if (outcome.status !== 'succeeded') throw new Error(`${key}: ${JSON.stringify(outcome)}`);
  };
}

/** The start options the API gives a workflow (client/api/operations.ts): memo with the claim, search attributes. */
function apiStartOptions(type: 'payment' | 'checkout', key: string, request: Record<string, unknown>) {
  const memo: StartMemo = { type, tenant: TENANT, key, fingerprint: fingerprint(type, request), request };
  return {
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    memo: { ...memo },
    typedSearchAttributes: [
      { key: SearchAttributes.OperationType, value: type },
      { key: SearchAttributes.OperationStatus, value: 'processing' },
      { key: SearchAttributes.Tenant, value: TENANT },
      { key: SearchAttributes.NeedsAttention, value: false },
    ],
  };
}

/** A bare workflow plus retrysafe's memo and search-attribute bookkeeping, started like the API starts one. */
function trackedWorkflow(ctx: BenchContext, client: Client, type: 'bare1' | 'bare3', tag: string) {
  return async (i: number) => {
    const op = type === 'bare1' ? 'payment' : 'checkout';
    const key = `bench-${ctx.runId}-${type}-tracked-${tag}-${i}`;
    await client.workflow.execute(type === 'bare1' ? 'bare1Tracked' : 'bare3Tracked', {
      taskQueue: ctx.stack.taskQueues.baseline,
      workflowId: `${TENANT}/${key}`,
      args: [{ key: `${TENANT}/${key}` }],
      ...apiStartOptions(op, key, op === 'payment' ? paymentBody() : checkoutBody()),
    });
    ctx.finished[`${type}-tracked`].push(`${TENANT}/${key}`);
  };
}

function bareWorkflow(ctx: BenchContext, client: Client, type: 'bare1' | 'bare3', tag: string) {
  return async (i: number) => {
    const workflowId = `bench-${ctx.runId}-${type}-${tag}-${i}`;
    await client.workflow.execute(type, { taskQueue: ctx.stack.taskQueues.baseline, workflowId, args: [{ key: workflowId }] });
    ctx.finished[type].push(workflowId);
  };
}

export function merge(batches: Batch[]): ScenarioResult {
  const first = batches[0]!;
  const latencies = batches.flatMap((b) => b.result.latenciesMs);
  const errors = batches.flatMap((b) => b.result.errors);
  const wallMs = batches.reduce((a, b) => a + b.result.wallMs, 0);
  let usage: Usage | undefined;
  for (const b of batches) usage = addUsage(usage, b.usage);
  return {
    kind: first.kind,
    concurrency: first.concurrency,
    ops: latencies.length,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 5),
    wallMs,
    opsPerSec: (latencies.length / wallMs) * 1000,
    latencyMs: summarize(latencies),
    samplesMs: latencies.map((l) => Math.round(l * 100) / 100),
    usage: usage!,
    littleMeanMs: latencies.length ? (first.concurrency * wallMs) / latencies.length : Number.NaN,
    steadyOpsPerSec: latencies.length ? (first.concurrency * 1000) / summarize(latencies).mean : Number.NaN,
    answered202: batches.reduce((a, b) => a + b.tally.answered202, 0),
    retried503: batches.reduce((a, b) => a + b.tally.retried503, 0),
    batchesCappedByTime: batches.filter((b) => b.result.cappedByTime).length,
    nonPositiveSamples: latencies.filter((l) => l <= 0).length,
  };
}

function overBudget(ctx: BenchContext, by: number): boolean {
  return performance.now() - ctx.startedAt > by;
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
  // The warm-up's keys are not part of any sample.
  for (const k of Object.keys(ctx.finished) as (keyof BenchContext['finished'])[]) ctx.finished[k] = [];
}

/** New operations and bare workflows, interleaved: per concurrency, rounds in ABBA order. */
export async function runNewOperations(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const client = ctx.stack.client;
  for (const c of ctx.mode.concurrencies) {
    const n = ctx.mode.ops(c);
    const batches = new Map<Kind, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      const tag = `c${c}-r${round}`;
      type Step = [Kind, (i: number, tally: Tally) => Promise<void>];
      const payments: Step[] = [
        ['payment', newOperation(ctx, 'payment', tag)],
        ['bare1', bareWorkflow(ctx, client, 'bare1', tag)],
      ];
      const checkouts: Step[] = [
        ['checkout', newOperation(ctx, 'checkout', tag)],
        ['bare3', bareWorkflow(ctx, client, 'bare3', tag)],
      ];
      // The decomposition (no API; bare + bookkeeping) runs once, in the first round.
      if (ctx.mode.direct && round === 0) {
        payments.push(['payment-direct', directOperation(ctx, client, 'payment', tag)]);
        payments.push(['bare1-tracked', trackedWorkflow(ctx, client, 'bare1', tag)]);
        checkouts.push(['checkout-direct', directOperation(ctx, client, 'checkout', tag)]);
        checkouts.push(['bare3-tracked', trackedWorkflow(ctx, client, 'bare3', tag)]);
      }
      const plan = [...payments, ...checkouts];
      if (round % 2 === 1) plan.reverse();
      for (const [kind, op] of plan) {
        if (overBudget(ctx, ctx.mode.budget.newOpsBy)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx, kind, c, n, op);
        ctx.log(
          `  ${kind.padEnd(9)} c=${String(c).padEnd(2)} round ${round + 1}: ${batch.result.ok} ok` +
            `${batch.result.errors.length ? `, ${batch.result.errors.length} errors` : ''}, ` +
            `${((batch.result.ok / batch.result.wallMs) * 1000).toFixed(1)}/s, p50 ${median(batch.result.latenciesMs).toFixed(1)} ms`,
        );
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    for (const kind of ['payment', 'payment-direct', 'bare1-tracked', 'bare1', 'checkout', 'checkout-direct', 'bare3-tracked', 'bare3'] as Kind[]) {
      const b = batches.get(kind);
      if (b) results.push(merge(b));
    }
  }
  return results;
}

/** Replays of finished payments through the API (cached, then uncached) against the plain endpoint. */
export async function runReplays(ctx: BenchContext): Promise<ScenarioResult[]> {
  const keys = ctx.finished.payment;
  if (keys.length === 0) throw new Error('no finished payment to replay');
  const body = JSON.stringify(paymentBody());
  const results: ScenarioResult[] = [];
  const replay = (apiUrl: string) => async (i: number) => {
    const key = keys[i % keys.length]!;
    const res = await ctx.http.send('POST', `${apiUrl}/v1/payments`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body,
    });
    if (res.status !== 200 || res.headers['idempotent-replayed'] !== 'true') {
      throw new Error(`replay of ${key} → ${res.status} replayed=${String(res.headers['idempotent-replayed'])}`);
    }
  };
  const plain = async (i: number) => {
    const res = await ctx.http.send('POST', `${ctx.stack.urls.plain}/v1/payments`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': keys[i % keys.length]! },
      body,
    });
    if (res.status !== 200) throw new Error(`plain → ${res.status}`);
  };
  for (const c of ctx.mode.concurrencies) {
    const batches = new Map<Kind, Batch[]>();
    for (let round = 0; round < ctx.mode.rounds; round++) {
      const plan: Array<[Kind, number, (i: number) => Promise<void>]> = [
        ['replay', ctx.mode.replays(c), replay(ctx.stack.urls.api)],
        ['plain', ctx.mode.replays(c), plain],
      ];
      if (round % 2 === 1) plan.reverse();
      if (ctx.stack.urls.apiNoCache) plan.push(['replay-uncached', ctx.mode.uncachedReplays(c), replay(ctx.stack.urls.apiNoCache)]);
      for (const [kind, n, op] of plan) {
        if (overBudget(ctx, ctx.mode.budget.replaysBy)) {
          ctx.skipped.push(`${kind} c=${c} round ${round + 1}`);
          continue;
        }
        const batch = await measured(ctx, kind, c, n, op, ctx.mode.replayBatchMaxMs);
        batches.set(kind, [...(batches.get(kind) ?? []), batch]);
      }
    }
    for (const kind of ['replay', 'plain', 'replay-uncached'] as Kind[]) {
      const b = batches.get(kind);
      if (b) {
        const merged = merge(b);
        ctx.log(`  ${kind.padEnd(15)} c=${String(c).padEnd(2)}: ${merged.opsPerSec.toFixed(0)}/s, p50 ${merged.latencyMs.p50.toFixed(2)} ms`);
        results.push(merged);
      }
    }
  }
  return results;
}

export interface ContentionTrial {
  type: 'payment' | 'checkout';
  key: string;
  requests: number;
  statuses: Record<string, number>;
  /** Answers without Idempotent-Replayed: the requests that started the operation. */
  winners: number;
  /** Executions of the workflow ID in Temporal's visibility store. */
  executions: number;
  /** Claims the API says it won (retrysafe_operations_started_total). */
  claimsWon: number;
  /** Charges the bank made for the key (balance moved ÷ amount). */
  charges: number;
  /** Units of the trial's own SKU taken (reservations), checkouts only. */
  unitsTaken: number | null;
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
    await new Promise((r) => setTimeout(r, 250));
  }
  return count;
}

/** `requests` identical POSTs at once for one new key, for each type and trial. */
export async function runContention(ctx: BenchContext): Promise<ContentionTrial[]> {
  const trials: ContentionTrial[] = [];
  const { bank, reservations, api } = ctx.stack.urls;
  const n = ctx.mode.contentionRequests;
  // Its own sockets: all requests must be in flight together, not queued behind each other.
  const burst = httpClient(n);
  try {
    for (let t = 0; t < ctx.mode.contentionTrials; t++) {
      if (t > 0 && overBudget(ctx, ctx.mode.budget.contentionBy)) {
        ctx.skipped.push(`contention trials ${t + 1}–${ctx.mode.contentionTrials}`);
        break;
      }
      for (const type of ['payment', 'checkout'] as const) {
        const key = `bench-${ctx.runId}-contention-${type}-${t}`;
        const account = `acc_contention_${ctx.runId}_${type}_${t}`;
        const sku = `sku_contention_${ctx.runId}_${type}_${t}`;
        const balance = 1_000_000;
        const stock = 1_000;
        await ctx.http.json('POST', `${bank}/accounts`, { id: account, currency: 'EUR', balance });
        if (type === 'checkout') await ctx.http.json('PUT', `${reservations}/inventory/${sku}`, { available: stock });
        const body = type === 'payment' ? paymentBody(account) : checkoutBody(account, sku);
        // Open the sockets first, so that the burst measures the API and not TCP handshakes.
        await Promise.all(Array.from({ length: n }, () => burst.send('GET', `${api}/healthz`)));
        const claimsBefore = await claimsWon(ctx.http, api, type);
        await new Promise((r) => setTimeout(r, 300));
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
        const workflowId = `${TENANT}/${key}`;
        const executions = await countExecutions(ctx.stack.client, workflowId);
        const after = await ctx.http.json<{ balance: number }>('GET', `${bank}/accounts/${account}`);
        const charges = (balance - after.body.balance) / AMOUNT;
        let unitsTaken: number | null = null;
        if (type === 'checkout') {
          const inv = await ctx.http.json<{ available: number }>('GET', `${reservations}/inventory/${sku}`);
          unitsTaken = stock - inv.body.available;
        }
        const outcomes = new Set(answers.map((a) => JSON.stringify({ s: a.operation.status, r: a.operation.result, e: a.operation.error })));
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
          retried503: tally.retried503,
          distinctOutcomes: outcomes.size,
          winnerLatencyMs: winnerMs,
          waiterLatencyMs: waiterSummary,
          waiterOverWinner: waiterSummary.p50 / winnerMs,
          usage,
        };
        ctx.log(
          `  contention ${type} trial ${t + 1}: executions ${executions}, charges ${charges}` +
            `${unitsTaken === null ? '' : `, units ${unitsTaken}`}, winner ${winnerMs.toFixed(0)} ms, ` +
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
