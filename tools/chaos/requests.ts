// One request of a chaos client and what it checks on every answer: the call itself
// (counted per status, tenant and instance, with the tenant's credentials), the POST of an
// operation to the collection its definition names with a seeded Prefer, the back-off
// before a retry, and the rules every refusal must follow (a 5xx is only ever 503 with
// Retry-After; a 429 is rate_limited with Retry-After and the RateLimit fields).
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProblemCode } from '../../client/lib/types.js';
import type { PlannedOp } from './plan.js';
import type { Rng } from './prng.js';
import type { ClientContext } from './records.js';

export type Answer = { status: number; headers: Headers; body: Record<string, unknown> } | { networkError: string };

/** The problem code of an answer, when it carries one. */
export function problemCode(body: Record<string, unknown>): ProblemCode | undefined {
  return typeof body.code === 'string' ? (body.code as ProblemCode) : undefined;
}

/**
 * How long to wait before retrying after a 503 or a network error: at least Retry-After,
 * doubling with each failure in a row (capped), with jitter. Clients that retry a dead
 * engine in a tight loop keep it dead once it is back; a careful client backs off.
 */
export function backoff(rng: Rng, failuresInARow: number, retryAfterHeader: string | null): number {
  const exponential = Math.min(8_000, 250 * 2 ** Math.min(failuresInARow, 6));
  return Math.max(retryAfterMs(retryAfterHeader), exponential * (0.5 + rng.next()));
}

/** Retry-After in ms (delay-seconds, the form the API sends); 0 when absent or not a number. */
export function retryAfterMs(header: string | null): number {
  return Number(header ?? '0') * 1000 || 0;
}

export const other = (api: 0 | 1): 0 | 1 => (api === 0 ? 1 : 0);

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

export async function call(
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
  const definition = ctx.catalog.get(op.type);
  if (!definition) throw new Error(`chaos: no definition of the planned type ${op.type}`);
  return `/v1/${definition.plural}`;
}

export function post(ctx: ClientContext, api: 0 | 1, op: PlannedOp, body: PlannedOp['body'], rng: Rng): Promise<Answer> {
  const prefer = op.prefer ?? rng.weighted(PREFER);
  const headers: Record<string, string> = { 'idempotency-key': keyHeader(op) };
  if (prefer) headers.prefer = prefer;
  const waitS = prefer === undefined ? 10 : prefer.startsWith('wait=') ? Number(prefer.slice(5)) : 0;
  return call(ctx, api, op, 'POST', collectionOf(ctx, op), headers, body, (waitS + 20) * 1000);
}

export function get(ctx: ClientContext, api: 0 | 1, op: PlannedOp): Promise<Answer> {
  return call(ctx, api, op, 'GET', `/v1/operations/${encodeURIComponent(op.key)}`, {}, undefined, 20_000);
}

/**
 * Checks the rules every 5xx answer must follow: only 503, and every 503 with Retry-After
 * (engine_unavailable, engine_busy, shutting_down alike: each is safe to retry, and says when).
 */
export function check5xx(
  ctx: ClientContext,
  op: PlannedOp,
  api: 0 | 1,
  ans: { status: number; headers: Headers; body: Record<string, unknown> },
) {
  const code = problemCode(ans.body) ?? 'none';
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
export function check429(
  ctx: ClientContext,
  op: PlannedOp,
  api: 0 | 1,
  ans: { status: number; headers: Headers; body: Record<string, unknown> },
): void {
  const missing = ['retry-after', 'ratelimit', 'ratelimit-policy'].filter((h) => !ans.headers.get(h));
  if (problemCode(ans.body) !== 'rate_limited' || missing.length > 0) {
    ctx.violations.push({
      rule: 'API: 429 is rate_limited with Retry-After and RateLimit fields',
      key: op.key,
      message: `api-${api} answered 429 ${String(ans.body.code)}${missing.length > 0 ? ` without ${missing.join(', ')}` : ''}`,
    });
  }
}

/**
 * The answer, or null after backing off from a network error, a 5xx, a 429 (checked) or a
 * 408: the caller then tries again through the other instance.
 */
export async function unlessRetried(
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
