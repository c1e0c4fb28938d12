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
// after Retry-After, a 202 is polled to its end. The flooded type is the registry's
// cheapest (fewest steps): the flood is of requests, not of downstream work. Configurations:
// as shipped (Temporal's task queue fairness on, the API's default admission), fairness off
// (the dev server's `task-queue-fairness` setting left out, as the ablation does), and a
// configured rate for tenant A (RETRYSAFE_TENANT_LIMITS), half the engine's throughput as
// the first configuration measured it, or the mode's fixed rate (the smoke run's, whose
// flood is too short to be sure to cross half a fast engine's throughput); the report's
// audit table prints the rate each configuration ran with.
import { setMaxListeners } from 'node:events';
// Not node:timers/promises: a tenant told to stop must wake from its Retry-After wait and
// return, and this sleep resolves early on abort where that one rejects.
import { sleep } from '../../supervisor/ready.js';
import { httpClient, type HttpAnswer, type HttpClient } from '../http.js';
import type { OverloadCounts } from '../modes.js';
import { startRowEngine, type RowEngines } from '../stack.js';
import { summarize } from '../stats.js';
import {
  FAIRNESS_SETTING,
  overloadPlan,
  REFERENCE_CONCURRENCY,
  TENANTS,
  tenantRate,
  type Answers,
  type FloodResult,
  type OverloadAudit,
  type OverloadResult,
  type OverloadRow,
  type TenantFigures,
} from './overload-figures.js';
import { resourcesOf, sampleRequest, type Request, type Resources } from './requests.js';
import { DEFINITIONS, openResources, PLENTY } from './workload.js';

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
    private readonly keyPrefix: string,
  ) {}

  private headers(extra: Record<string, string> = {}) {
    return { authorization: `Bearer ${this.secret}`, ...extra };
  }

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
    const honest = res.status < 500 || (res.status === 503 && retryAfter !== undefined);
    if (!honest || (res.status === 429 && retryAfter === undefined)) {
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
    /** Whether the answers so far prove that nothing started under the key. */
    let nothingStarted = true;
    for (;;) {
      if (Date.now() > deadline) {
        if (!nothingStarted) this.uncertain.add(key);
        throw new Error(`${key}: no answer within 60 s`);
      }
      let res: HttpAnswer;
      try {
        res = await this.http.send('POST', `${this.api}/v1/${this.plural}`, {
          headers: this.headers({ 'content-type': 'application/json', 'idempotency-key': key }),
          body,
        });
      } catch {
        this.answers.lost = (this.answers.lost ?? 0) + 1;
        nothingStarted = false;
        await sleep(1_000);
        continue;
      }
      const code = this.note(res);
      if (res.status === 200 || res.status === 202) {
        this.accepted.set(key, undefined);
        const status = await this.finish(key, JSON.parse(res.text) as { status?: string }, deadline);
        this.accepted.set(key, status);
        return status;
      }
      if (res.status === 429 || res.status === 503) {
        const startedNothing = res.status === 429 || code === 'engine_busy';
        nothingStarted &&= startedNothing;
        if (nothingStarted && stop?.aborted) return 'dropped';
        await sleep(Number(res.headers['retry-after'] ?? 1) * 1000, startedNothing ? stop : undefined);
        continue;
      }
      if (!nothingStarted) this.uncertain.add(key);
      throw new Error(`${key}: POST → ${res.status} ${res.text.slice(0, 200)}`);
    }
  }

  private async finish(key: string, first: { status?: string }, deadline: number): Promise<'succeeded' | 'failed'> {
    let operation = first;
    while (operation.status === 'processing') {
      if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
      await sleep(50);
      operation = await this.read(key);
    }
    return operation.status === 'succeeded' ? 'succeeded' : 'failed';
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
): Promise<TenantFigures> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let started = 0;
  let ended = 0;
  let succeeded = 0;
  const answersBefore = { ...tenant.answers };
  const t0 = performance.now();
  const client = async () => {
    while (!opts.stop?.aborted && performance.now() - t0 < opts.maxMs && (opts.count === undefined || started < opts.count)) {
      started++;
      const s = performance.now();
      try {
        const outcome = await tenant.one(tag, opts.stop);
        if (outcome === 'dropped') continue;
        latencies.push(performance.now() - s);
        ended++;
        if (outcome === 'succeeded') succeeded++;
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const answers: Answers = {};
  for (const [k, v] of Object.entries(tenant.answers))
    if (v - (answersBefore[k] ?? 0) > 0) answers[k] = v - (answersBefore[k] ?? 0);
  return {
    ended,
    succeeded,
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 5),
    answers,
    latencyMs: summarize(latencies),
    samplesMs: latencies.map((l) => Math.round(l * 100) / 100),
    wallMs: performance.now() - t0,
  };
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
async function audit(
  http: HttpClient,
  bank: string,
  tenants: Array<{ tenant: Tenant; resources: Resources; balance: number }>,
): Promise<OverloadAudit> {
  const problems: string[] = [];
  let accepted = 0;
  let terminal = 0;
  let succeeded = 0;
  const accounts: OverloadAudit['accounts'] = [];
  for (const { tenant, resources, balance } of tenants) {
    const keys = [...new Set([...tenant.accepted.keys(), ...tenant.uncertain])];
    accepted += tenant.accepted.size;
    const wrong: string[] = [];
    let ok = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < keys.length) {
          const key = keys[next++]!;
          const { status } = await tenant.read(key).catch((err: Error) => ({ status: err.message }));
          const seen = tenant.accepted.get(key);
          if (status === 'succeeded') ok++;
          if (status === 'succeeded' || status === 'failed') {
            if (tenant.accepted.has(key)) terminal++;
            if (seen !== undefined && seen !== status) wrong.push(`${key}: answered ${seen}, reads ${status}`);
          } else if (!(status === 'absent' && !tenant.accepted.has(key))) {
            wrong.push(`${key}: ${status}`);
          }
        }
      }),
    );
    succeeded += ok;
    if (wrong.length) problems.push(`${tenant.name}: ${wrong.length} operations not as answered or not terminal (${wrong[0]})`);
    for (const [account, { amount }] of resources.accounts) {
      const res = await http.json<{ balance: number }>('GET', `${bank}/accounts/${encodeURIComponent(account)}`);
      const moved = balance - res.body.balance;
      const expected = ok * amount;
      accounts.push({ tenant: tenant.name, account, expected, moved });
      if (moved !== expected) problems.push(`${tenant.name}: ${account} moved ${moved}, its ${ok} successes took ${expected}`);
    }
    if (tenant.badCount) problems.push(`${tenant.name}: ${tenant.badCount} dishonest refusals (${tenant.bad.join(', ')})`);
  }
  const badAnswers = tenants.reduce((n, t) => n + t.tenant.badCount, 0);
  return {
    accepted,
    terminal,
    succeeded,
    accounts,
    badAnswers,
    badSamples: tenants.flatMap((t) => t.tenant.bad).slice(0, 5),
    ok: problems.length === 0,
    problems,
  };
}

export async function runOverload(
  opts: RowEngines & { runId: string; counts: OverloadCounts; http: HttpClient; log: (line: string) => void },
): Promise<OverloadResult> {
  const { counts, log, runId } = opts;
  // The cheapest operation: a flood of requests, not of downstream work.
  const definition = [...DEFINITIONS].sort((x, y) => x.steps.length - y.steps.length)[0]!;
  const secrets = { flood: `bench-flood-${runId}-secret`, steady: `bench-steady-${runId}-secret` };
  const apiKeys = `${secrets.flood}=${TENANTS.flood},${secrets.steady}=${TENANTS.steady}`;
  const started = performance.now();
  const rows: OverloadRow[] = [];
  const skipped: string[] = [];
  const plan = overloadPlan();
  // The flooding tenant holds many sockets at once; the steady one, one.
  const floodHttp = httpClient(Math.max(...counts.floods, REFERENCE_CONCURRENCY) + 16);
  const steadyHttp = httpClient(REFERENCE_CONCURRENCY + 16);
  try {
    for (const [i, row] of plan.entries()) {
      if (performance.now() - started > counts.budgetMs) {
        skipped.push(row.name);
        continue;
      }
      const rate = row.rated ? `${TENANTS.flood}=${counts.tenantRate ?? tenantRate(rows[0]?.reference.opsPerSec)}/s` : null;
      log(`overload ${i + 1}/${plan.length}: ${row.name}${rate ? ` (${rate})` : ''}`);
      const stack = await startRowEngine(opts, {
        folder: `overload-${i}`,
        without: row.without,
        apiEnv: { RETRYSAFE_API_KEYS: apiKeys, ...(rate ? { RETRYSAFE_TENANT_LIMITS: rate } : {}) },
        log,
      });
      try {
        const balance = PLENTY.balance;
        const make = (who: 'flood' | 'steady', http: HttpClient) => {
          const request = sampleRequest(definition, `overload_${runId}_${i}_${who}`);
          const resources = resourcesOf(definition, request);
          const tenant = new Tenant(
            TENANTS[who],
            http,
            stack.urls.api,
            definition.plural,
            secrets[who],
            request,
            `bench-${runId}-overload${i}-${who}`,
          );
          return { tenant, resources, balance };
        };
        const a = make('flood', floodHttp);
        const b = make('steady', steadyHttp);
        for (const t of [a, b]) await openResources(opts.http, stack.urls, t.resources);
        await loop(a.tenant, 'warm', 4, { count: counts.warmupOps, maxMs: 30_000 });
        await loop(b.tenant, 'warm', 4, { count: counts.warmupOps, maxMs: 30_000 });
        const idle = await loop(b.tenant, 'idle', 1, { count: counts.idleOps, maxMs: counts.floodMaxMs });
        const reference = await loop(b.tenant, 'reference', REFERENCE_CONCURRENCY, {
          count: counts.referenceOps,
          maxMs: counts.floodMaxMs,
        });
        const referenceRate = (REFERENCE_CONCURRENCY * 1000) / reference.latencyMs.mean;
        log(
          `  ${TENANTS.steady} alone: p50 ${idle.latencyMs.p50.toFixed(1)} ms; at c=${REFERENCE_CONCURRENCY}: ${referenceRate.toFixed(1)}/s`,
        );
        const floods: FloodResult[] = [];
        for (const c of counts.floods) {
          const f = await flood(a.tenant, b.tenant, c, counts);
          log(
            `  ${TENANTS.flood} at c=${c}: ${f.aGoodput.toFixed(1)}/s succeeded, answers ${JSON.stringify(f.a.answers)}; ` +
              `${TENANTS.steady} p50 ${f.b.latencyMs.p50.toFixed(1)} ms, p99 ${f.b.latencyMs.p99.toFixed(1)} ms`,
          );
          floods.push(f);
        }
        const checked = await audit(opts.http, stack.urls.bank, [a, b]);
        log(`  audit: ${checked.ok ? 'nothing lost or doubled' : checked.problems.join('; ')}`);
        rows.push({
          name: row.name,
          fairness: !row.without.includes(FAIRNESS_SETTING),
          tenantLimits: rate,
          idle,
          reference: { concurrency: REFERENCE_CONCURRENCY, opsPerSec: referenceRate, figures: reference },
          floods,
          audit: checked,
          argv: stack.temporal.argv,
        });
      } finally {
        await stack.stop();
        opts.onEngine(undefined);
      }
    }
  } finally {
    floodHttp.close();
    steadyHttp.close();
  }
  return { type: definition.type, tenants: TENANTS, counts, rows, skipped };
}
