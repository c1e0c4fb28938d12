// Overload and fairness: one tenant floods new operations while another sends them one at a
// time, on a fresh engine per configuration (like the ablation, on the run's sandboxes):
//
//   tenant B alone, one at a time ─▶ B's idle latency
//   tenant B at c=32 ─▶ the engine's throughput (the reference for A's goodput)
//   for each flood level: tenant A floods at c=200 (400, ...) ─┬─ after a ramp, B one at a
//                                                              └─ time, a fixed count
//   then: every operation a 200 or 202 accepted is terminal, each account moved exactly
//   what its tenant's successes took, and no answer was a 5xx other than 503 with Retry-After
//
// Both tenants behave as the API asks a client to: a 429 or 503 is retried with the same key
// after Retry-After, a 202 is polled to its end. The flooded type is the registry's cheapest
// (fewest steps): the flood is of requests, not of downstream work. Configurations: as
// shipped (Temporal's task queue fairness on, the API's default admission), fairness off (the
// dev server's `task-queue-fairness` setting left out), and a configured rate for tenant A
// (RETRYSAFE_TENANT_LIMITS): half the engine's throughput as the first configuration
// measured it, or the mode's fixed rate.
import { setMaxListeners } from 'node:events';
// Not node:timers/promises: a tenant told to stop must wake from its Retry-After wait and
// return, and this sleep resolves early on abort where that one rejects.
import { sleep } from '../../supervisor/ready.js';
import { httpClient, summarize, type HttpAnswer, type HttpClient, type LatencySummary } from '../load.js';
import type { OverloadCounts } from '../options.js';
import { onRowEngine, type Stack } from '../stack.js';
import { DEFINITIONS, openResources, PLENTY, resourcesOf, sampleRequest, type Request, type Resources } from '../workload.js';
import type { BenchContext } from './context.js';

export const FAIRNESS_SETTING = 'task-queue-fairness';
export const AS_SHIPPED = 'as shipped: fairness on, default admission';
export const FAIRNESS_OFF = 'fairness off, default admission';
export const TENANT_RATE = 'fairness on, a rate for tenant A';
export const TENANTS = { flood: 'tenant-a', steady: 'tenant-b' } as const;
/** The concurrency of the throughput A's goodput is compared with. */
export const REFERENCE_CONCURRENCY = 32;

/** A tenant's answers by status (`503 engine_busy`: status and code), over a phase. */
export type Answers = Record<string, number>;

export interface TenantFigures {
  /** Operations that reached a terminal outcome, and of them the ones that succeeded; those given up on. */
  ended: number;
  succeeded: number;
  errors: number;
  errorSamples: string[];
  answers: Answers;
  /** From the first POST to the terminal outcome, refusals waited out included. */
  latencyMs: LatencySummary;
  samplesMs: number[];
  wallMs: number;
}

/** Tenant A at `concurrency` while B ran; A's successes per second over the flood. */
export interface FloodResult {
  concurrency: number;
  a: TenantFigures;
  b: TenantFigures;
  aGoodput: number;
}

export interface OverloadAudit {
  /** Operations a 200 or 202 accepted, and of them the ones terminal (and succeeded) when read back after the run. */
  accepted: number;
  terminal: number;
  succeeded: number;
  /** Each tenant's account: what its successes should have taken, and what the bank moved. */
  accounts: Array<{ tenant: string; account: string; expected: number; moved: number }>;
  /** 5xx answers other than 503, and 429/503 answers without Retry-After. */
  badAnswers: number;
  badSamples: string[];
  ok: boolean;
  problems: string[];
}

export interface OverloadRow {
  name: string;
  fairness: boolean;
  /** RETRYSAFE_TENANT_LIMITS of the row's API; null: none (the default). */
  tenantLimits: string | null;
  idle: TenantFigures;
  /** B at REFERENCE_CONCURRENCY: its steady rate (concurrency ÷ mean latency), ops/s. */
  reference: { concurrency: number; opsPerSec: number; figures: TenantFigures };
  floods: FloodResult[];
  audit: OverloadAudit;
  argv: string[];
}

export interface OverloadResult {
  /** The operation type both tenants start. */
  type: string;
  tenants: typeof TENANTS;
  counts: OverloadCounts;
  rows: OverloadRow[];
  /** Configurations the time budget left out. */
  skipped: string[];
}

/** The configurations, in the order they run: the tenant rate is set from the first one's throughput. */
export const OVERLOAD_PLAN = [
  { name: AS_SHIPPED, without: [] as string[], rated: false },
  { name: FAIRNESS_OFF, without: [FAIRNESS_SETTING], rated: false },
  { name: TENANT_RATE, without: [] as string[], rated: true },
];

/** Tenant A's rate in the rated configuration: half the engine's throughput, at least 1/s. */
export function tenantRate(referenceOpsPerSec: number | undefined): number {
  return Number.isFinite(referenceOpsPerSec) ? Math.max(1, Math.floor(referenceOpsPerSec! / 2)) : 10;
}

/** A tenant as a client of the API: its key, its request, and what it met. */
class Tenant {
  readonly answers: Answers = {};
  /** Keys a 200 or 202 accepted, with the outcome the client saw (none: it gave up first). */
  readonly accepted = new Map<string, 'succeeded' | 'failed' | undefined>();
  /** Keys given up on after an answer that does not prove nothing started (lost, engine_unavailable). */
  readonly uncertain = new Set<string>();
  readonly bad: string[] = [];
  badCount = 0;
  private n = 0;

  constructor(
    readonly name: string,
    private readonly http: HttpClient,
    private readonly api: string,
    private readonly plural: string,
    private readonly secret: string,
    readonly request: Request,
    readonly resources: Resources,
    private readonly keyPrefix: string,
  ) {}

  private headers(extra: Record<string, string> = {}) {
    return { authorization: `Bearer ${this.secret}`, ...extra };
  }

  /** Counts an answer (and flags a dishonest one); its problem code. */
  private note(res: HttpAnswer): string {
    let code = '';
    try {
      code = (JSON.parse(res.text) as { code?: string }).code ?? '';
    } catch {
      // not a problem document
    }
    const label = res.status === 503 && code ? `503 ${code}` : String(res.status);
    this.answers[label] = (this.answers[label] ?? 0) + 1;
    const retryAfter = res.headers['retry-after'];
    if ((res.status >= 500 && res.status !== 503) || ((res.status === 503 || res.status === 429) && retryAfter === undefined)) {
      this.badCount++;
      if (this.bad.length < 5) this.bad.push(`${label}${retryAfter === undefined ? ' without Retry-After' : ''}`);
    }
    return code;
  }

  /**
   * One new operation to its end. Refusals that started nothing (429, 503 engine_busy) are
   * retried after Retry-After until `stop` (then the key is dropped: nothing ran under it);
   * any other 503 or a lost answer is retried with the same key until answered, since the
   * operation may have started.
   */
  async one(tag: string, stop?: AbortSignal): Promise<'succeeded' | 'failed' | 'dropped'> {
    const key = `${this.keyPrefix}-${tag}-${this.n++}`;
    const deadline = Date.now() + 60_000;
    const body = JSON.stringify(this.request);
    let nothingStarted = true;
    const giveUp = (why: string) => {
      if (!nothingStarted) this.uncertain.add(key);
      return new Error(`${key}: ${why}`);
    };
    while (Date.now() <= deadline) {
      const res = await this.http
        .send('POST', `${this.api}/v1/${this.plural}`, {
          headers: this.headers({ 'content-type': 'application/json', 'idempotency-key': key }),
          body,
        })
        .catch(() => undefined);
      if (!res) {
        this.answers.lost = (this.answers.lost ?? 0) + 1;
        nothingStarted = false;
        await sleep(1_000);
        continue;
      }
      const code = this.note(res);
      if (res.status === 200 || res.status === 202) {
        this.accepted.set(key, undefined);
        let operation = JSON.parse(res.text) as { status?: string };
        while (operation.status === 'processing') {
          if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
          await sleep(50);
          operation = await this.read(key);
        }
        const status = operation.status === 'succeeded' ? 'succeeded' : 'failed';
        this.accepted.set(key, status);
        return status;
      }
      if (res.status !== 429 && res.status !== 503) throw giveUp(`POST → ${res.status} ${res.text.slice(0, 200)}`);
      const startedNothing = res.status === 429 || code === 'engine_busy';
      nothingStarted &&= startedNothing;
      if (nothingStarted && stop?.aborted) return 'dropped';
      await sleep(Number(res.headers['retry-after'] ?? 1) * 1000, startedNothing ? stop : undefined);
    }
    throw giveUp('no answer within 60 s');
  }

  /** The operation as the API shows it now; `absent` when no operation has the key. */
  async read(key: string): Promise<{ status?: string }> {
    const res = await this.http.send('GET', `${this.api}/v1/operations/${encodeURIComponent(key)}`, { headers: this.headers() });
    if (res.status === 404) return { status: 'absent' };
    if (res.status !== 200) throw new Error(`GET operation ${key} → ${res.status}`);
    return JSON.parse(res.text) as { status?: string };
  }
}

/** Runs `tenant`'s operations in a closed loop of `concurrency` until `count` are done, `maxMs` passed or `stop`. */
async function loop(
  tenant: Tenant,
  tag: string,
  concurrency: number,
  opts: { count?: number; maxMs: number; stop?: AbortSignal },
) {
  const latencies: number[] = [];
  const errors: string[] = [];
  let [started, ended, succeeded] = [0, 0, 0];
  const answersBefore = { ...tenant.answers };
  const t0 = performance.now();
  const more = () =>
    !opts.stop?.aborted && performance.now() - t0 < opts.maxMs && (opts.count === undefined || started < opts.count);
  const client = async () => {
    while (more()) {
      started++;
      const s = performance.now();
      const outcome = await tenant.one(tag, opts.stop).catch((err: Error) => void errors.push(err.message));
      if (!outcome || outcome === 'dropped') continue;
      latencies.push(performance.now() - s);
      ended++;
      if (outcome === 'succeeded') succeeded++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const answers = Object.entries(tenant.answers)
    .map(([k, v]) => [k, v - (answersBefore[k] ?? 0)] as const)
    .filter(([, v]) => v > 0);
  const wallMs = performance.now() - t0;
  return {
    ...{
      ended,
      succeeded,
      errors: errors.length,
      errorSamples: [...new Set(errors)].slice(0, 5),
      answers: Object.fromEntries(answers),
    },
    ...{ latencyMs: summarize(latencies), samplesMs: latencies.map((l) => Math.round(l * 100) / 100), wallMs },
  } satisfies TenantFigures;
}

/** Tenant A floods at `concurrency` while, after a ramp, B runs its fixed count one at a time. */
async function flood(a: Tenant, b: Tenant, concurrency: number, counts: OverloadCounts): Promise<FloodResult> {
  const stop = new AbortController();
  // Every client of the flood waits on it at once while it is refused: not a leak.
  setMaxListeners(concurrency + 16, stop.signal);
  const tag = `flood${concurrency}`;
  // The flood outlasts B's operations: B never runs unflooded within its bound.
  const aRun = loop(a, tag, concurrency, { maxMs: counts.rampMs + counts.floodMaxMs, stop: stop.signal });
  await sleep(counts.rampMs);
  const bFigures = await loop(b, tag, 1, { count: counts.floodOps, maxMs: counts.floodMaxMs });
  stop.abort();
  const aFigures = await aRun;
  return { concurrency, a: aFigures, b: bFigures, aGoodput: (aFigures.succeeded / aFigures.wallMs) * 1000 };
}

/**
 * Reads back, once the row's traffic has ended, every operation a 200 or 202 accepted and
 * every key a client gave up on without proof that nothing started, then each tenant's
 * account: the bank must have moved exactly what the operations the API reports succeeded
 * take, and each outcome a client saw must be the one the API reports now.
 */
async function audit(http: HttpClient, bank: string, tenants: Tenant[]): Promise<OverloadAudit> {
  const problems: string[] = [];
  const out = { accepted: 0, terminal: 0, succeeded: 0, accounts: [] as OverloadAudit['accounts'] };
  for (const tenant of tenants) {
    const keys = [...new Set([...tenant.accepted.keys(), ...tenant.uncertain])];
    out.accepted += tenant.accepted.size;
    const wrong: string[] = [];
    let ok = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let key = keys.shift(); key !== undefined; key = keys.shift()) {
          const { status } = await tenant.read(key).catch((err: Error) => ({ status: err.message }));
          const seen = tenant.accepted.get(key);
          if (status === 'succeeded') ok++;
          if (status === 'succeeded' || status === 'failed') {
            if (tenant.accepted.has(key)) out.terminal++;
            if (seen !== undefined && seen !== status) wrong.push(`${key}: answered ${seen}, reads ${status}`);
          } else if (!(status === 'absent' && !tenant.accepted.has(key))) wrong.push(`${key}: ${status}`);
        }
      }),
    );
    out.succeeded += ok;
    if (wrong.length) problems.push(`${tenant.name}: ${wrong.length} operations not as answered or not terminal (${wrong[0]})`);
    for (const [account, { amount }] of tenant.resources.accounts) {
      const res = await http.json<{ balance: number }>('GET', `${bank}/accounts/${encodeURIComponent(account)}`);
      const [moved, expected] = [PLENTY.balance - res.body.balance, ok * amount];
      out.accounts.push({ tenant: tenant.name, account, expected, moved });
      if (moved !== expected) problems.push(`${tenant.name}: ${account} moved ${moved}, its ${ok} successes took ${expected}`);
    }
    if (tenant.badCount) problems.push(`${tenant.name}: ${tenant.badCount} dishonest refusals (${tenant.bad.join(', ')})`);
  }
  const badAnswers = tenants.reduce((n, t) => n + t.badCount, 0);
  return { ...out, badAnswers, badSamples: tenants.flatMap((t) => t.bad).slice(0, 5), ok: problems.length === 0, problems };
}

/** One configuration on its engine: both tenants warmed up, B alone and at c=32, each flood, the audit. */
async function configuration(ctx: BenchContext, stack: Stack, make: (who: 'flood' | 'steady', stack: Stack) => Tenant) {
  const [counts, log] = [ctx.mode.overload, ctx.log];
  const [a, b] = [make('flood', stack), make('steady', stack)];
  for (const t of [a, b]) await openResources(ctx.http, stack.urls, t.resources);
  for (const t of [a, b]) await loop(t, 'warm', 4, { count: counts.warmupOps, maxMs: 30_000 });
  const idle = await loop(b, 'idle', 1, { count: counts.idleOps, maxMs: counts.floodMaxMs });
  const figures = await loop(b, 'reference', REFERENCE_CONCURRENCY, { count: counts.referenceOps, maxMs: counts.floodMaxMs });
  const reference = {
    concurrency: REFERENCE_CONCURRENCY,
    opsPerSec: (REFERENCE_CONCURRENCY * 1000) / figures.latencyMs.mean,
    figures,
  };
  log(
    `  ${TENANTS.steady} alone: p50 ${idle.latencyMs.p50.toFixed(1)} ms; at c=${REFERENCE_CONCURRENCY}: ${reference.opsPerSec.toFixed(1)}/s`,
  );
  const floods: FloodResult[] = [];
  for (const c of counts.floods) {
    const f = await flood(a, b, c, counts);
    log(
      `  ${TENANTS.flood} at c=${c}: ${f.aGoodput.toFixed(1)}/s succeeded, answers ${JSON.stringify(f.a.answers)}; ` +
        `${TENANTS.steady} p50 ${f.b.latencyMs.p50.toFixed(1)} ms, p99 ${f.b.latencyMs.p99.toFixed(1)} ms`,
    );
    floods.push(f);
  }
  const checked = await audit(ctx.http, stack.urls.bank, [a, b]);
  log(`  audit: ${checked.ok ? 'nothing lost or doubled' : checked.problems.join('; ')}`);
  return { idle, reference, floods, audit: checked, argv: stack.temporal.argv };
}

export async function runOverload(ctx: BenchContext): Promise<void> {
  const { runId } = ctx;
  const counts = ctx.mode.overload;
  // The cheapest operation: a flood of requests, not of downstream work.
  const definition = [...DEFINITIONS].sort((x, y) => x.steps.length - y.steps.length)[0]!;
  const secrets = { flood: `bench-flood-${runId}-secret`, steady: `bench-steady-${runId}-secret` };
  const apiKeys = `${secrets.flood}=${TENANTS.flood},${secrets.steady}=${TENANTS.steady}`;
  const o: OverloadResult = { type: definition.type, tenants: TENANTS, counts, rows: [], skipped: [] };
  ctx.log(
    `overload: a tenant floods at c=${counts.floods.join(', ')} while another sends one at a time (3 configurations, at most ${(counts.budgetMs / 60_000).toFixed(0)} min)`,
  );
  // The flooding tenant holds many sockets at once; the steady one, one.
  const http = {
    flood: httpClient(Math.max(...counts.floods, REFERENCE_CONCURRENCY) + 16),
    steady: httpClient(REFERENCE_CONCURRENCY + 16),
  };
  const started = performance.now();
  try {
    for (const [i, row] of OVERLOAD_PLAN.entries()) {
      if (performance.now() - started > counts.budgetMs) {
        o.skipped.push(row.name);
        continue;
      }
      const rate = row.rated ? `${TENANTS.flood}=${counts.tenantRate ?? tenantRate(o.rows[0]?.reference.opsPerSec)}/s` : null;
      ctx.log(`overload ${i + 1}/${OVERLOAD_PLAN.length}: ${row.name}${rate ? ` (${rate})` : ''}`);
      const make = (who: 'flood' | 'steady', stack: Stack) => {
        const request = sampleRequest(definition, `overload_${runId}_${i}_${who}`);
        const keys = `bench-${runId}-overload${i}-${who}`;
        return new Tenant(
          TENANTS[who],
          http[who],
          stack.urls.api,
          definition.plural,
          secrets[who],
          request,
          resourcesOf(definition, request),
          keys,
        );
      };
      const apiEnv = { RETRYSAFE_API_KEYS: apiKeys, ...(rate ? { RETRYSAFE_TENANT_LIMITS: rate } : {}) };
      const figures = await onRowEngine(ctx, { folder: `overload-${i}`, without: row.without, apiEnv }, (stack) =>
        configuration(ctx, stack, make),
      );
      o.rows.push({ name: row.name, fairness: !row.without.includes(FAIRNESS_SETTING), tenantLimits: rate, ...figures });
    }
  } finally {
    http.flood.close();
    http.steady.close();
  }
  ctx.results.overload = o;
  ctx.results.skipped.push(...o.skipped.map((row) => `overload: ${row}`));
}
