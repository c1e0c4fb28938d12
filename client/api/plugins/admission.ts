// Admission: what a flood meets before it reaches Temporal, decided after authentication
// (which names the tenant) and before the body is read, parsed, validated or fingerprinted,
// without an engine call, so a refusal costs this instance almost nothing. A POST that
// would start an operation goes, in order, through:
//
//   its outcome in this instance's cache ───────────────────▶ served, never refused
//   its operation in flight on this instance ─┬─ < 64 wait ─▶ joins it (one engine wait for all)
//                                              └─ else ─────▶ 429 (waiters)
//   its tenant at its share of the in-flight limit ────────▶ 503 engine_busy (Retry-After 1-5 s:
//                                                              later the more the tenant is refused)
//   its tenant's rate window spent ─────────────────────────▶ 429 rate_limited
//   else ▶ admitted: holds a place until its answer is sent
//
// A request let through writes its "incoming request" line here; a refused one writes only
// its answer's. A refusal starts nothing, so a retry with the same key is always safe; a
// replay this instance does not know (its operation ended before a restart, or on another
// instance) may be refused like a new request, and once admitted it answers the stored
// outcome. A unit of the rate taken by a request that then started nothing (its body
// refused, or it found its operation already there) is given back.
//
// The in-flight limit adapts (admission/adaptive-limit.ts): each operation this instance
// started and waited on is a latency sample, measured from admission to outcome.
//
// Reads, lists and cancels are bounded per tenant and instance too (429 rate_limited),
// after authentication and before anything else: each one may cost an engine call. One
// answered from the outcome cache costs none and is not counted.
//
// Not @fastify/rate-limit: its hook answers as soon as a key is over its count, without the
// cache and in-flight checks that must come first; its fields are the older drafts'
// (RateLimit-Limit/-Remaining/-Reset); and the in-flight limit is no rate at all.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { operationRef, type OperationRef } from '../../../workflows/identity.js';
import type { AdaptiveLimit } from '../admission/adaptive-limit.js';
import { BusyRetryAfter } from '../admission/busy-retry-after.js';
import { MAX_WAITERS_PER_KEY, type Hold, type InFlight } from '../admission/in-flight.js';
import type { MemoryWindows } from '../admission/memory-windows.js';
import { rateLimitFields } from '../admission/rate-limit-fields.js';
import type { RateWindows } from '../admission/rate-windows.js';
import { describeRate, rateFor, type Rate, type TenantLimits } from '../admission/tenant-limits.js';
import { resetSeconds } from '../admission/window-store.js';
import type { ApiInstance } from '../instance.js';
import type { ApiMetrics } from '../metrics.js';
import type { Problem } from '../../../common/http/problem.js';
import { logReceived } from '../../../common/http/request-log.js';
import { replyWithProblem } from '../error-handler.js';
import { isValidKey } from '../idempotency-key.js';
import { problems } from '../problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What admission bounds on this route: a start of a new operation, or a read (read, list, cancel). */
    admission?: 'start' | 'read';
  }
  interface FastifyRequest {
    /** Set by a start route once it has its answer: what the operation is and whether this request started it. */
    startOutcome: StartOutcome | null;
  }
}

export interface StartOutcome {
  type: string;
  status: string;
  /** The error code of a failed operation. */
  code?: string;
  replayed: boolean;
}

export interface AdmissionDeps {
  tenantLimits: TenantLimits;
  readLimits: TenantLimits;
  /** The shared rate windows; undefined when no tenant's new operations are limited. */
  windows: RateWindows | undefined;
  /** The read limits' windows: per instance. */
  reads: MemoryWindows;
  inFlight: InFlight;
  limit: AdaptiveLimit;
  /** Whether a replay of this key is answered from the outcome cache. */
  cached(ref: OperationRef): boolean;
  /** The tenants the API keys name: each has a share metric from the start. */
  tenants: readonly string[];
  metrics: ApiMetrics;
}

type Reason = 'rate_limited' | 'engine_busy' | 'waiters' | 'reads_limited';

const CANCEL_SUFFIX = '/cancel';
const READS: [string, string] = ['read, list or cancel', 'reads, lists and cancels'];
const WAITERS = { quota: MAX_WAITERS_PER_KEY, windowSeconds: 1 };

/** Sends a refusal from the hook itself: no error path, no body read, nothing else runs. */
type Refuse = (request: FastifyRequest, reply: FastifyReply, reason: Reason, problem: Problem) => FastifyReply;

export function installAdmission(app: ApiInstance, deps: AdmissionDeps): void {
  const { inFlight, limit, metrics } = deps;
  app.decorateRequest('startOutcome', null);
  metrics.tenantShares.read = () => inFlight.shares(deps.tenants);
  metrics.inFlightLimit.set(limit.limit);
  metrics.engineLatencyRatio.set(limit.ratio);
  const refuse: Refuse = (request, reply, reason, problem) => {
    metrics.admissionRefused.inc({ reason });
    return replyWithProblem(request, reply, problem);
  };
  const admitStart = startAdmission(deps, refuse);
  const admitRead = readAdmission(deps, refuse);

  // Each bounded route gets its check last among its onRequest hooks: after auth (an app
  // hook) and after the route's own header checks, which name the operation.
  app.addHook('onRoute', (route) => {
    const kind = route.config?.admission;
    if (!kind) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...own, kind === 'start' ? admitStart : admitRead];
  });
}

/** A start: its cached outcome, the operation in flight it joins, the tenant's share of the in-flight limit, its rate. */
function startAdmission(deps: AdmissionDeps, refuse: Refuse): onRequestAsyncHookHandler {
  const { inFlight, windows } = deps;
  const busyRetryAfter = new BusyRetryAfter();
  const holdUntilAnswered = answeredHolds(deps);
  return async (request, reply) => {
    const ref = request.operation;
    if (deps.cached(ref)) return logReceived(request);

    const joined = inFlight.join(ref.workflowId);
    if (joined) {
      if ('full' in joined) {
        const fields = rateLimitFields('waiters', WAITERS, { allowed: false, remaining: 0, resetMs: 1000 });
        return refuse(request, reply, 'waiters', problems.tooManyWaiters(MAX_WAITERS_PER_KEY, fields));
      }
      holdUntilAnswered(request, reply, joined.joined, null);
      return logReceived(request);
    }
    const hold = inFlight.enter(ref.workflowId, ref.tenant);
    if (!hold) {
      const retryAfter = busyRetryAfter.refused(ref.tenant, inFlight.shareOf(ref.tenant));
      return refuse(request, reply, 'engine_busy', problems.engineBusy('bound', retryAfter));
    }

    const rate = rateFor(deps.tenantLimits, request.tenant);
    if (rate && windows) {
      const decision = await windows.take(request.tenant, rate);
      const fields = rateLimitFields('tenant', rate, decision);
      if (!decision.allowed) {
        hold.release();
        return refuse(
          request,
          reply,
          'rate_limited',
          problems.rateLimited(request.tenant, describeRate(rate), resetSeconds(decision), fields),
        );
      }
      reply.headers(fields);
    }
    holdUntilAnswered(request, reply, hold, { rate: rate && windows ? rate : null });
    logReceived(request);
  };
}

/** Holds a place until the answer is sent, then learns from it (a latency sample; a unit of rate given back). */
function answeredHolds({ inFlight, limit, metrics, windows }: AdmissionDeps) {
  const learn = (request: FastifyRequest, reply: FastifyReply, hold: Hold, rate: Rate | null) => {
    const outcome = request.startOutcome;
    const startedNothing = outcome?.replayed === true || (reply.statusCode >= 400 && reply.statusCode < 500);
    if (rate && windows && startedNothing) void windows.give(request.tenant, rate);
    // Only an operation this request started, and waited on, says how long the engine takes.
    if (!outcome || outcome.replayed || request.waitMs <= 0) return;
    const terminal = outcome.status !== 'processing';
    limit.sample({
      kind: `${outcome.type}:${terminal ? outcome.status : 'succeeded'}:${outcome.code ?? ''}`,
      latencyMs: performance.now() - hold.since,
      censored: !terminal,
      inFlight: inFlight.size + 1,
    });
    metrics.inFlightLimit.set(limit.limit);
    metrics.engineLatencyRatio.set(limit.ratio);
  };

  return (request: FastifyRequest, reply: FastifyReply, hold: Hold, started: { rate: Rate | null } | null) => {
    const done = () => {
      hold.release();
      metrics.operationsInFlight.set(inFlight.size);
      if (started) learn(request, reply, hold, started.rate);
    };
    reply.raw.once('close', done);
    // The client may have gone before this hook ran: its 'close' has been and gone.
    if (reply.raw.closed) done();
    metrics.operationsInFlight.set(inFlight.size);
  };
}

/** The operation a read or a cancel names, when its path names one (a list names none). */
function namedOperation(request: FastifyRequest): OperationRef | undefined {
  const params = request.params as Record<string, string | undefined>;
  let key = params.key ?? params['*'];
  if (key === undefined) return undefined;
  if (params.key === undefined && request.method === 'POST' && key.endsWith(CANCEL_SUFFIX))
    key = key.slice(0, -CANCEL_SUFFIX.length);
  return isValidKey(key) ? operationRef(request.tenant, key) : undefined;
}

/** A read, a list or a cancel: the tenant's read rate, unless its answer is in the outcome cache. */
function readAdmission(deps: AdmissionDeps, refuse: Refuse): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const rate = rateFor(deps.readLimits, request.tenant);
    if (!rate) return;
    // A finished operation this instance knows is answered from memory (a cancel of it too,
    // 409): it costs the engine nothing, so it spends nothing, like a replay.
    const named = namedOperation(request);
    if (named && deps.cached(named)) return;
    const decision = await deps.reads.take(request.tenant, rate);
    if (decision.allowed) return;
    const fields = rateLimitFields('reads', rate, decision);
    return refuse(
      request,
      reply,
      'reads_limited',
      problems.readsLimited(request.tenant, describeRate(rate, READS), resetSeconds(decision), fields),
    );
  };
}
