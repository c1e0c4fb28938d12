// How the bench drives and summarises load: a small HTTP/1.1 client over keep-alive sockets
// (the same for retrysafe's API, the plain baseline and the peers, so no side pays for a
// heavier client), closed-loop batches, metered, and the latency summaries and ratios.
// Percentiles are nearest-rank on the sorted samples: p99 of 100 samples is the 99th value.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'node:http';
import { addUsage, type Accounting, type Usage } from './meter.js';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface HttpClient {
  send(method: string, url: string, opts?: { headers?: Record<string, string>; body?: string }): Promise<HttpAnswer>;
  json<T = Record<string, unknown>>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): void;
}

export function httpClient(maxSockets: number, timeoutMs = 70_000): HttpClient {
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const send: HttpClient['send'] = (method, url, opts = {}) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...opts.headers };
      if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
      const req = request(url, { method, agent, headers, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out after ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(opts.body);
    });
  return {
    send,
    async json(method, url, body) {
      const json = body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
      const res = await send(method, url, json);
      return { status: res.status, body: (res.text ? JSON.parse(res.text) : {}) as never };
    },
    close: () => agent.destroy(),
  };
}

export interface LatencySummary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function summarize(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]! : Number.NaN;
  return {
    n: sorted.length,
    mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

export const median = (values: number[]) => summarize(values).p50;

/** a ÷ b, or NaN when either is missing. */
export function ratio(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? Number.NaN : a / b;
}

/** At most `n` of `items`, spread over the list (first, middle, last …), not just the first few. */
export function spreadSample<T>(items: T[], n: number): T[] {
  const step = Math.max(1, Math.floor(items.length / n));
  return items.filter((_, i) => i % step === 0).slice(0, n);
}

export interface BatchResult {
  latenciesMs: number[];
  wallMs: number;
  ok: number;
  errors: string[];
  /** True when the time bound, not the count, ended the batch. */
  cappedByTime: boolean;
}

/**
 * `concurrency` clients, each starting its next operation as soon as its previous one
 * answered, until `total` were started or `maxMs` passed (then the ones in flight finish):
 * both bounds hold, so a batch is short on a slow machine too.
 */
export async function closedLoop(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
  maxMs = Number.POSITIVE_INFINITY,
): Promise<BatchResult> {
  const latenciesMs: number[] = [];
  const errors: string[] = [];
  let next = 0;
  let cappedByTime = false;
  const started = performance.now();
  const client = async () => {
    for (let i = next++; i < total; i = next++) {
      if (performance.now() - started > maxMs) {
        cappedByTime = true;
        return;
      }
      const t0 = performance.now();
      await op(i).then(
        () => latenciesMs.push(performance.now() - t0),
        (err: Error) => errors.push(err.message),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, client));
  return { latenciesMs, wallMs: performance.now() - started, ok: latenciesMs.length, errors, cappedByTime };
}

/** What a client met on the way to the outcomes of a batch. */
export interface Tally {
  answered202: number;
  retried503: number;
}

/**
 * What a scenario measured: its kind (an operation type, `bare<N>`, `bare<N>-tracked`,
 * `<type>-direct`, `bare-http-<type>`, `replay`, `replay-uncached`, `plain`, a peer, or
 * `replay-<type or peer>`), at one concurrency, over its rounds.
 */
export interface ScenarioResult {
  kind: string;
  concurrency: number;
  ops: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  /** Completed ÷ wall time; `steadyOpsPerSec` is the closed loop's c ÷ mean latency (Little's law). */
  opsPerSec: number;
  latencyMs: LatencySummary;
  /** Every latency sample in ms, rounded to 0.01 ms (for the chart and re-analysis). */
  samplesMs: number[];
  usage: Usage;
  /** POSTs answered 202 (then polled to the end), and answered 503 (retried after Retry-After). */
  answered202: number;
  retried503: number;
  /** Mean latency from throughput (concurrency × wall ÷ n), immune to a coarse clock. */
  littleMeanMs: number;
  steadyOpsPerSec: number;
  batchesCappedByTime: number;
  /** Samples ≤ 0 ms: the clock did not advance across a round trip (a VM clock under load). */
  nonPositiveSamples: number;
}

export interface Batch {
  kind: string;
  concurrency: number;
  result: BatchResult;
  usage: Usage;
  tally: Tally;
}

/** One closed-loop batch of `total` operations at `concurrency`, metered by `accounting`. */
export async function measured(
  accounting: Accounting,
  kind: string,
  concurrency: number,
  total: number,
  op: (i: number, tally: Tally) => Promise<void>,
  maxMs: number,
): Promise<Batch> {
  const tally: Tally = { answered202: 0, retried503: 0 };
  // Let the previous batch's tail (visibility, timers) settle before the meter starts.
  await sleep(300);
  const stop = await accounting.start();
  const result = await closedLoop(total, concurrency, (i) => op(i, tally), maxMs);
  return { kind, concurrency, result, usage: await stop(), tally };
}

/** The batches of one scenario (its rounds) as one result. */
export function merge(batches: Batch[]): ScenarioResult {
  const { kind, concurrency } = batches[0]!;
  const latencies = batches.flatMap((b) => b.result.latenciesMs);
  const errors = batches.flatMap((b) => b.result.errors);
  const wallMs = batches.reduce((a, b) => a + b.result.wallMs, 0);
  const latencyMs = summarize(latencies);
  const n = latencies.length;
  return {
    kind,
    concurrency,
    ops: n,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 5),
    wallMs,
    opsPerSec: (n / wallMs) * 1000,
    latencyMs,
    samplesMs: latencies.map((l) => Math.round(l * 100) / 100),
    usage: batches.map((b) => b.usage).reduce<Usage | undefined>(addUsage, undefined)!,
    littleMeanMs: n ? (concurrency * wallMs) / n : Number.NaN,
    steadyOpsPerSec: n ? (concurrency * 1000) / latencyMs.mean : Number.NaN,
    answered202: batches.reduce((a, b) => a + b.tally.answered202, 0),
    retried503: batches.reduce((a, b) => a + b.tally.retried503, 0),
    batchesCappedByTime: batches.filter((b) => b.result.cappedByTime).length,
    nonPositiveSamples: latencies.filter((l) => l <= 0).length,
  };
}
