// The clients of a chaos run. Each logical operation is sent by one or more clients that
// behave as a careful payments client must: retry with the SAME key and body on a network
// error, a 5xx or a 202, through either API instance, until the outcome is terminal. Some
// operations are re-sent after their outcome (a late retry) and some with a changed
// amount (which must be refused with 422), and some are cancelled at a random moment
// (POST …/cancel: 202 while processing, 409 once finished). A refusal for load (429, or
// 503 engine_busy) is retried no sooner than its Retry-After, with the same key, and so is
// a 408 (the instance did not receive the request in time: nothing started). Every
// answer is recorded: the status codes clients saw (per tenant), every terminal outcome
// and every cancel's answer, so the auditor can check that all agree.
import type { OperationRegistry } from '../../workflows/registry.js';
import { createRng, type Rng } from './prng.js';
import type { PlannedOp } from './plan.js';

export interface Violation {
  /** Which rule: one of the invariants I1..I5 (auditor.ts), or the API contract rule that was broken. */
  rule: string;
  key?: string;
  message: string;
}

export interface ClientStats {
  /** Every request the clients sent to the API (the auditor's reads are not counted). */
  requests: number;
  byStatus: Record<string, number>;
  /** The same, per tenant: the flooding tenant's 429s and 503s apart from the others'. */
  byTenant: Record<string, { requests: number; byStatus: Record<string, number> }>;
  byApi: [number, number];
  networkErrors: number;
  /** Requests beyond the first for the original body of an operation (all its clients). */
  retries: number;
  /** Clients beyond the first that sent an operation at the same time. */
  concurrentClients: number;
  lateReplays: number;
  changedAmountSent: number;
  got422: number;
  /** 503 answers by problem code (engine_unavailable while Temporal is down, engine_busy past the bound). */
  unavailableByCode: Record<string, number>;
  /** The same, per tenant. */
  unavailableByTenant: Record<string, Record<string, number>>;
  /** The first 503 of each code as it was sent, for the report. */
  unavailableSamples: Record<string, { contentType: string | null; retryAfter: string | null; body: string }>;
  /** Answers to POSTs of an operation that was already terminal, per Idempotent-Replayed value. */
  replayHeader: { true: number; missing: number };
  /** Cancels sent, by where they landed: the step a 202 named (`none` before the first), or `finished` (409). */
  cancelsByStep: Record<string, number>;
  /** 408 answers: the instance did not receive a request in time; retried with the same key. */
  requestTimeouts: number;
}

/** A cancel a client sent, and what the API answered. */
export interface CancelRecord {
  /** 202 (requested while processing), 409 (already finished), or `network` if no answer came. */
  status: number | 'network';
  /** The operation's step in the 202 answer. */
  step?: string | null;
  code?: string;
  /**
   * Earlier attempts that got no answer or a 5xx: any of them may have reached Temporal, so
   * a later 409 can be the answer to an operation that this very cancel ended.
   */
  unanswered?: number;
}

export interface OpRecord {
  op: PlannedOp;
  /** Some client got a 200 or 202 for it: it must not be lost. */
  accepted: boolean;
  /** The last terminal operation resource a client saw. */
  terminal?: Record<string, unknown>;
  /** Every terminal outcome clients saw, with where it came from. */
  outcomes: Array<{ via: string; signature: string }>;
  requests: number;
  /** No client saw it terminal before the bound. */
  timedOut: boolean;
  changedAmount?: { status: number | 'network'; code?: string; differences?: unknown };
  cancel?: CancelRecord;
  /** When a client first got a 200 or 202 for it (epoch ms). */
  acceptedAt?: number;
}

export interface ClientContext {
  apiUrls: readonly [string, string];
  /** The operations the plan was drawn from: the collection each type is started in. */
  registry: OperationRegistry;
  /** The Authorization header of each tenant. */
  authorization: Readonly<Record<string, string>>;
  /**
   * No client request starts after this (epoch ms). Unbounded while faults are injected;
   * the run sets it once the faults have stopped and every part is up again.
   */
  deadline: number;
  stats: ClientStats;
  violations: Violation[];
}

export function newClientStats(): ClientStats {
  return {
    requests: 0,
    byStatus: {},
    byTenant: {},
    byApi: [0, 0],
    networkErrors: 0,
    retries: 0,
    concurrentClients: 0,
    lateReplays: 0,
    changedAmountSent: 0,
    got422: 0,
    unavailableByCode: {},
    unavailableByTenant: {},
    unavailableSamples: {},
    replayHeader: { true: 0, missing: 0 },
    cancelsByStep: {},
    requestTimeouts: 0,
  };
}

/** Share of operations a client cancels at a random moment after sending them. */
export const CANCEL_RATE = 0.15;

/** JSON with sorted keys: two equal outcomes give the same text whatever the field order. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What must be the same in every answer about a finished operation (invariant 4). */
export function outcomeSignature(operation: Record<string, unknown>): string {
  const error = operation.error as { code?: unknown; compensations?: unknown } | undefined | null;
  return stableJson({
    status: operation.status,
    code: error?.code ?? null,
    compensations: error?.compensations ?? null,
    result: operation.result ?? null,
  });
}

export function isTerminal(operation: Record<string, unknown>): boolean {
  return operation.status === 'succeeded' || operation.status === 'failed';
}

type Answer = { status: number; headers: Headers; body: Record<string, unknown> } | { networkError: string };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long to wait before retrying after a 503 or a network error: at least Retry-After,
 * doubling with each failure in a row (capped), with jitter. Clients that retry a dead
 * engine in a tight loop keep it dead once it is back; a careful client backs off.
 */
function backoff(rng: Rng, failuresInARow: number, retryAfterHeader: string | null): number {
  const exponential = Math.min(8_000, 250 * 2 ** Math.min(failuresInARow, 6));
  return Math.max(retryAfterMs(retryAfterHeader), exponential * (0.5 + rng.next()));
}

/** Retry-After in ms (delay-seconds, the form the API sends); 0 when absent or not a number. */
function retryAfterMs(header: string | null): number {
  return Number(header ?? '0') * 1000 || 0;
}
const other = (api: 0 | 1): 0 | 1 => (api === 0 ? 1 : 0);

/** How a POST asks to wait: mostly short, so clients come back while faults are on. */
const PREFER: ReadonlyArray<readonly [string | undefined, number]> = [
  ['respond-async', 15],
  ['wait=0', 10],
  ['wait=1', 25],
  ['wait=2', 25],
  ['wait=3', 15],
  ['wait=5', 7],
  [undefined, 3],
];

async function call(
  ctx: ClientContext,
  api: 0 | 1,
  op: PlannedOp,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<Answer> {
  ctx.stats.requests++;
  ctx.stats.byApi[api]++;
  const tenant = (ctx.stats.byTenant[op.tenant] ??= { requests: 0, byStatus: {} });
  tenant.requests++;
  const counted = (status: string) => {
    ctx.stats.byStatus[status] = (ctx.stats.byStatus[status] ?? 0) + 1;
    tenant.byStatus[status] = (tenant.byStatus[status] ?? 0) + 1;
  };
  const auth = ctx.authorization[op.tenant];
  const sent = { ...headers, ...(auth ? { authorization: auth } : {}) };
  try {
    const res = await fetch(ctx.apiUrls[api] + path, {
      method,
      headers: body === undefined ? sent : { ...sent, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { unparsed: text.slice(0, 200) };
    }
    counted(String(res.status));
    return { status: res.status, headers: res.headers, body: parsed };
  } catch (err) {
    ctx.stats.networkErrors++;
    counted('network');
    return { networkError: String((err as Error).cause ?? (err as Error).message) };
  }
}

function keyHeader(op: PlannedOp): string {
  return op.keyForm === 'quoted' ? `"${op.key}"` : op.key;
}

/** `/v1/<plural>`: where the definition of the type says its operations are started. */
function collectionOf(ctx: ClientContext, op: PlannedOp): string {
  const definition = ctx.registry.get(op.type);
  if (!definition) throw new Error(`chaos: no definition of the planned type ${op.type}`);
  return `/v1/${definition.plural}`;
}

function post(ctx: ClientContext, api: 0 | 1, op: PlannedOp, body: PlannedOp['body'], rng: Rng): Promise<Answer> {
  const prefer = op.prefer ?? rng.weighted(PREFER);
  const headers: Record<string, string> = { 'idempotency-key': keyHeader(op) };
  if (prefer) headers.prefer = prefer;
  const waitS = prefer === undefined ? 10 : prefer.startsWith('wait=') ? Number(prefer.slice(5)) : 0;
  return call(ctx, api, op, 'POST', collectionOf(ctx, op), headers, body, (waitS + 20) * 1000);
}

function get(ctx: ClientContext, api: 0 | 1, op: PlannedOp): Promise<Answer> {
  return call(ctx, api, op, 'GET', `/v1/operations/${encodeURIComponent(op.key)}`, {}, undefined, 20_000);
}

/**
 * Checks the rules every 5xx answer must follow: only 503, and every 503 with Retry-After
 * (engine_unavailable, engine_busy, shutting_down alike: each is safe to retry, and says when).
 */
function check5xx(
  ctx: ClientContext,
  op: PlannedOp,
  api: 0 | 1,
  ans: { status: number; headers: Headers; body: Record<string, unknown> },
) {
  const code = typeof ans.body.code === 'string' ? ans.body.code : 'none';
  if (ans.status !== 503) {
    ctx.violations.push({ rule: 'API: never a 5xx but 503', key: op.key, message: `api-${api} answered ${ans.status} ${code}` });
    return;
  }
  ctx.stats.unavailableByCode[code] = (ctx.stats.unavailableByCode[code] ?? 0) + 1;
  const byTenant = (ctx.stats.unavailableByTenant[op.tenant] ??= {});
  byTenant[code] = (byTenant[code] ?? 0) + 1;
  ctx.stats.unavailableSamples[code] ??= {
    contentType: ans.headers.get('content-type'),
    retryAfter: ans.headers.get('retry-after'),
    body: JSON.stringify(ans.body).slice(0, 300),
  };
  if (!ans.headers.get('retry-after')) {
    ctx.violations.push({
      rule: 'API: 503 carries Retry-After',
      key: op.key,
      message: `api-${api} answered 503 ${code} without Retry-After`,
    });
  }
}

/**
 * A 429 is a refusal for load: rate_limited, with Retry-After (when to come back) and the
 * RateLimit and RateLimit-Policy fields (what the limit is).
 */
function check429(
  ctx: ClientContext,
  op: PlannedOp,
  api: 0 | 1,
  ans: { status: number; headers: Headers; body: Record<string, unknown> },
): void {
  const missing = ['retry-after', 'ratelimit', 'ratelimit-policy'].filter((h) => !ans.headers.get(h));
  if (ans.body.code !== 'rate_limited' || missing.length > 0) {
    ctx.violations.push({
      rule: 'API: 429 is rate_limited with Retry-After and RateLimit fields',
      key: op.key,
      message: `api-${api} answered 429 ${String(ans.body.code)}${missing.length > 0 ? ` without ${missing.join(', ')}` : ''}`,
    });
  }
}

function recordTerminal(rec: OpRecord, operation: Record<string, unknown>, via: string): void {
  rec.terminal = operation;
  rec.outcomes.push({ via, signature: outcomeSignature(operation) });
}

/** One client: sends the operation and retries with the same key until it is terminal. */
async function clientLoop(ctx: ClientContext, rec: OpRecord, rng: Rng, firstApi: 0 | 1, onAccepted: () => void): Promise<void> {
  const { op } = rec;
  let api = firstApi;
  let viaGet = false;
  let failures = 0;
  for (let attempt = 0; Date.now() < ctx.deadline; attempt++) {
    if (attempt > 0) ctx.stats.retries++;
    rec.requests++;
    const ans = viaGet ? await get(ctx, api, op) : await post(ctx, api, op, op.body, rng);
    if ('networkError' in ans) {
      await sleep(backoff(rng, failures++, null));
      if (rng.chance(0.7)) api = other(api);
      viaGet = false;
      continue;
    }
    const code = typeof ans.body.code === 'string' ? ans.body.code : undefined;
    if ((ans.status === 200 || ans.status === 202) && typeof ans.body.status === 'string') {
      failures = 0;
      rec.accepted = true;
      rec.acceptedAt ??= Date.now();
      onAccepted();
      if (isTerminal(ans.body)) {
        if (ans.status !== 200) {
          ctx.violations.push({
            rule: 'API: 202 only while processing',
            key: op.key,
            message: `api-${api} answered 202 for a ${String(ans.body.status)} operation`,
          });
        }
        recordTerminal(rec, ans.body, `api-${api} ${viaGet ? 'GET' : 'POST'}`);
        return;
      }
      if (ans.status === 200 && !viaGet) {
        ctx.violations.push({
          rule: 'API: 200 only when finished',
          key: op.key,
          message: `api-${api} answered 200 to a POST for a processing operation`,
        });
      }
      if (ans.status === 202 && (!ans.headers.get('location') || !ans.headers.get('retry-after'))) {
        ctx.violations.push({
          rule: 'API: 202 carries Location and Retry-After',
          key: op.key,
          message: `api-${api} answered 202 without them`,
        });
      }
      const retryAfterMs = Number(ans.headers.get('retry-after') ?? '1') * 1000;
      await sleep(Math.min(retryAfterMs, rng.int(200, 1_500)));
      viaGet = rng.chance(op.getAfter202);
      if (rng.chance(0.5)) api = other(api);
      continue;
    }
    if (ans.status >= 500) {
      check5xx(ctx, op, api, ans);
      await sleep(backoff(rng, failures++, ans.headers.get('retry-after')));
      api = other(api);
      viaGet = false;
      continue;
    }
    if (ans.status === 408) {
      // The instance did not receive the whole request in time (a client, or a process,
      // starved of CPU): nothing was started, so the same request again is safe.
      ctx.stats.requestTimeouts++;
      await sleep(backoff(rng, failures++, null));
      api = other(api);
      viaGet = false;
      continue;
    }
    if (ans.status === 429) {
      // The tenant's rate is spent, whichever instance it asks: come back when it says.
      check429(ctx, op, api, ans);
      await sleep(Math.max(retryAfterMs(ans.headers.get('retry-after')), 250) * (1 + 0.25 * rng.next()));
      if (rng.chance(0.5)) api = other(api);
      viaGet = false;
      continue;
    }
    if (ans.status === 404 && viaGet) {
      // Only ever asked after a 202: the operation exists and must be found.
      ctx.violations.push({ rule: 'I5 nothing lost', key: op.key, message: `api-${api} answered 404 for an accepted operation` });
      viaGet = false;
      continue;
    }
    ctx.violations.push({
      rule: ans.status === 422 ? 'API: a retry with the same body is a replay' : 'API: unexpected answer',
      key: op.key,
      message: `api-${api} answered ${ans.status} ${code ?? JSON.stringify(ans.body).slice(0, 120)} to the original request`,
    });
    return;
  }
  rec.timedOut = true;
}

/**
 * The answer, or null after backing off from a network error, a 5xx, a 429 (checked) or a
 * 408: the caller then tries again through the other instance.
 */
async function unlessRetried(
  ctx: ClientContext,
  op: PlannedOp,
  api: 0 | 1,
  rng: Rng,
  failures: number,
  ans: Answer,
): Promise<Exclude<Answer, { networkError: string }> | null> {
  if ('networkError' in ans) {
    await sleep(backoff(rng, failures, null));
    return null;
  }
  if (ans.status >= 500) {
    check5xx(ctx, op, api, ans);
    await sleep(backoff(rng, failures, ans.headers.get('retry-after')));
    return null;
  }
  if (ans.status === 429) {
    check429(ctx, op, api, ans);
    await sleep(backoff(rng, failures, ans.headers.get('retry-after')));
    return null;
  }
  if (ans.status === 408) {
    ctx.stats.requestTimeouts++;
    await sleep(backoff(rng, failures, null));
    return null;
  }
  return ans;
}

/** The same key with a changed amount, once the operation was accepted: must be 422. */
async function sendChanged(ctx: ClientContext, rec: OpRecord, rng: Rng): Promise<void> {
  const { op } = rec;
  const changed = { ...op.body, amount: Number(op.body.amount) + op.changedAmount!.delta };
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  ctx.stats.changedAmountSent++;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    const ans = await unlessRetried(ctx, op, api, rng, failures, await post(ctx, api, op, changed, rng));
    if (!ans) {
      api = other(api);
      continue;
    }
    const code = typeof ans.body.code === 'string' ? ans.body.code : undefined;
    rec.changedAmount = { status: ans.status, code, differences: ans.body.differences };
    if (ans.status === 422) ctx.stats.got422++;
    if (ans.status !== 422 || code !== 'idempotency_key_reused') {
      ctx.violations.push({
        rule: 'API: same key, other amount is 422',
        key: op.key,
        message: `the amount changed by ${op.changedAmount!.delta} got ${ans.status} ${code ?? String(ans.body.status ?? '')} from api-${api}`,
      });
    } else if (stableJson(ans.body.differences) !== stableJson(['amount'])) {
      ctx.violations.push({
        rule: 'API: 422 names the differing fields',
        key: op.key,
        message: `differences ${stableJson(ans.body.differences)}, expected ["amount"]`,
      });
    }
    return;
  }
  rec.changedAmount = { status: 'network' };
}

/** The same request after the outcome is known: the same outcome, marked as a replay. */
async function lateReplay(ctx: ClientContext, rec: OpRecord, rng: Rng): Promise<void> {
  const { op } = rec;
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  ctx.stats.lateReplays++;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    rec.requests++;
    const ans = await unlessRetried(ctx, op, api, rng, failures, await post(ctx, api, op, op.body, rng));
    if (!ans) {
      api = other(api);
      continue;
    }
    if (ans.status !== 200 || !isTerminal(ans.body)) {
      ctx.violations.push({
        rule: 'I4 same outcome',
        key: op.key,
        message: `a late retry through api-${api} got ${ans.status} ${String(ans.body.status ?? ans.body.code)}`,
      });
      return;
    }
    if (ans.headers.get('idempotent-replayed') === 'true') ctx.stats.replayHeader.true++;
    else {
      ctx.stats.replayHeader.missing++;
      ctx.violations.push({
        rule: 'API: a replay says Idempotent-Replayed',
        key: op.key,
        message: `late retry through api-${api} without Idempotent-Replayed: true`,
      });
    }
    recordTerminal(rec, ans.body, `api-${api} late retry`);
    return;
  }
}

/**
 * Cancels the operation once it was accepted, after a random delay (so cancels land before,
 * during and after its steps). Retried on a network error or a 5xx like any request; a
 * 404 is possible only if the cancel overtook the start, so it waits and tries again.
 */
async function sendCancel(ctx: ClientContext, rec: OpRecord, rng: Rng, afterMs: number): Promise<void> {
  const { op } = rec;
  await sleep(afterMs);
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  const path = `/v1/operations/${encodeURIComponent(op.key)}/cancel`;
  let unanswered = 0;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    const ans = await unlessRetried(ctx, op, api, rng, failures, await call(ctx, api, op, 'POST', path, {}, undefined, 20_000));
    if (!ans) {
      unanswered++;
      api = other(api);
      continue;
    }
    const code = typeof ans.body.code === 'string' ? ans.body.code : undefined;
    if (ans.status === 404 && code === 'operation_not_found' && !rec.accepted) {
      await sleep(backoff(rng, failures, null));
      continue;
    }
    if (ans.status === 202) {
      const step = typeof ans.body.step === 'string' ? ans.body.step : 'none';
      rec.cancel = { status: 202, step: step === 'none' ? null : step, unanswered };
      ctx.stats.cancelsByStep[step] = (ctx.stats.cancelsByStep[step] ?? 0) + 1;
      if (ans.body.status !== 'processing' || ans.body.cancelRequested !== true || !ans.headers.get('location')) {
        ctx.violations.push({
          rule: 'API: cancel answers 202 with the processing operation',
          key: op.key,
          message: `api-${api} answered 202 with status ${String(ans.body.status)}, cancelRequested ${String(ans.body.cancelRequested)}`,
        });
      }
      return;
    }
    rec.cancel = { status: ans.status, ...(code ? { code } : {}), unanswered };
    if (ans.status === 409 && code === 'operation_already_completed') {
      ctx.stats.cancelsByStep.finished = (ctx.stats.cancelsByStep.finished ?? 0) + 1;
      return;
    }
    ctx.violations.push({
      rule: 'API: cancel answers 202 or 409',
      key: op.key,
      message: `api-${api} answered ${ans.status} ${code ?? ''} to a cancel of an accepted operation`,
    });
    return;
  }
  rec.cancel = { status: 'network', unanswered };
}

/** Runs one logical operation from its first request to its last planned retry. */
export async function runOperation(ctx: ClientContext, op: PlannedOp): Promise<OpRecord> {
  const rec: OpRecord = { op, accepted: false, outcomes: [], requests: 0, timedOut: false };
  const rng = createRng(op.clientSeed);
  let signalAccepted: (accepted: boolean) => void = () => undefined;
  const accepted = new Promise<boolean>((resolve) => (signalAccepted = resolve));
  ctx.stats.concurrentClients += op.concurrency - 1;
  const loops = Promise.all(
    Array.from({ length: op.concurrency }, (_, i) =>
      clientLoop(ctx, rec, rng.fork(`client-${i}`), ((op.firstApi + i) % 2) as 0 | 1, () => signalAccepted(true)),
    ),
  );
  const changed = op.changedAmount
    ? (async () => {
        if (!(await Promise.race([accepted, loops.then(() => rec.accepted)]))) return;
        await sleep(op.changedAmount!.afterMs);
        await sendChanged(ctx, rec, rng.fork('changed'));
      })()
    : Promise.resolve();
  // Decided from the operation's own seed, so a replay of the run cancels the same ones.
  const cancelRng = rng.fork('cancel');
  const cancelled =
    !op.flood && cancelRng.chance(CANCEL_RATE)
      ? (async () => {
          if (!(await Promise.race([accepted, loops.then(() => rec.accepted)]))) return;
          await sendCancel(ctx, rec, cancelRng, cancelRng.int(0, 3_000));
        })()
      : Promise.resolve();
  await loops;
  await cancelled;
  if (rec.terminal) {
    const replayRng = rng.fork('late');
    for (const delay of op.lateReplaysMs) {
      await sleep(delay);
      await lateReplay(ctx, rec, replayRng);
    }
  }
  await changed;
  return rec;
}
