// Admission of new operations: what a flood of them meets before it reaches Temporal. A
// POST that would start an operation runs, after auth and validation and before its
// handler, through, in order:
//
//   answered from the outcome cache ────────────────────▶ served, no limit
//   its operation already in flight on this instance ───▶ joins it, no limit
//   the engine bound, or the tenant's share of it, full ─┐
//   the tenant's rate window spent ──────────────────────┴▶ key names an operation?
//                                                             yes ▶ served
//                                                             no  ▶ 503 engine_busy / 429
//   else ▶ admitted: holds a place in the engine bound until its answer is sent
//
// A refusal starts nothing, so a retry with the same key is always safe. A retry of an
// operation that exists (after a restart of this instance, or of one still running) is
// served even over a limit: the lookup costs one read, and only refused requests pay it.
//
// Not @fastify/rate-limit: its hook answers as soon as a key is over its count, with no
// way to let such a request through once its key proves to name an operation; its fields
// are the older drafts' (RateLimit-Limit/-Remaining/-Reset); and its store would have been
// this SQL behind a callback. The engine bound is no rate at all.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationRef } from '../../../workflows/identity.js';
import type { InFlight } from '../admission/in-flight.js';
import { rateLimitFields } from '../admission/rate-limit-fields.js';
import type { RateWindows, WindowDecision } from '../admission/rate-windows.js';
import { describeRate, rateFor, type TenantLimits } from '../admission/tenant-limits.js';
import type { ApiInstance } from '../instance.js';
import type { ApiMetrics } from '../metrics.js';
import { problems } from '../problems.js';

export interface AdmissionDeps {
  limits: TenantLimits;
  /** The shared rate windows; undefined when no tenant is limited. */
  windows: RateWindows | undefined;
  inFlight: InFlight;
  /** Whether a replay of this key is answered from the outcome cache. */
  cached(ref: OperationRef): boolean;
  /** Whether the key already names an operation (one read of the engine). */
  exists(ref: OperationRef): Promise<boolean>;
  metrics: ApiMetrics;
  now(): number;
}

type Reason = 'rate_limited' | 'engine_busy';

/** The operation a request would start: set on the start routes before this hook runs. */
function operationOf(request: FastifyRequest): OperationRef | undefined {
  return (request as { operation?: OperationRef | null }).operation ?? undefined;
}

export function installAdmission(app: ApiInstance, deps: AdmissionDeps): void {
  const { limits, windows, inFlight, metrics } = deps;

  /** Lets a refused request through when its key names an operation; else throws the refusal. */
  const refuse = async (request: FastifyRequest, ref: OperationRef, reason: Reason, refusal: () => Error) => {
    let known = false;
    try {
      known = await deps.exists(ref);
    } catch (err) {
      // Nothing can be proven about the key: the refusal stands, and a retry asks again.
      request.log.debug({ err }, 'admission: looking up the key failed');
    }
    if (known) {
      metrics.admissionBypassed.inc({ reason });
      return;
    }
    metrics.admissionRefused.inc({ reason });
    request.log.info({ reason, inFlight: inFlight.size }, 'new operation refused');
    throw refusal();
  };

  const holdUntilAnswered = (reply: FastifyReply, release: () => void) => {
    const done = () => {
      release();
      metrics.operationsInFlight.set(inFlight.size);
    };
    reply.raw.once('close', done);
    // The client may have gone before this hook ran: its 'close' has been and gone.
    if (reply.raw.closed) done();
    metrics.operationsInFlight.set(inFlight.size);
  };

  app.addHook('preHandler', async (request, reply) => {
    const ref = operationOf(request);
    if (!ref || deps.cached(ref)) return;

    const joined = inFlight.join(ref.workflowId);
    if (joined) {
      holdUntilAnswered(reply, joined.release);
      return;
    }
    const hold = inFlight.enter(ref.workflowId, ref.tenant);
    if (!hold) return refuse(request, ref, 'engine_busy', () => problems.engineBusy('bound'));

    const rate = rateFor(limits, request.tenant);
    if (rate && windows) {
      let decision: WindowDecision | undefined;
      try {
        decision = windows.take(request.tenant, rate, deps.now());
      } catch (err) {
        // A limiter that cannot count must not stop payments: this request goes through
        // unlimited, and the log says why.
        request.log.error({ err }, 'admission: the rate windows could not be read; admitting without a limit');
      }
      if (decision) {
        const fields = rateLimitFields(rate, decision);
        if (!decision.allowed) {
          hold.release();
          const retryAfter = decision.resetSeconds;
          return refuse(request, ref, 'rate_limited', () =>
            problems.rateLimited(request.tenant, describeRate(rate), retryAfter, fields),
          );
        }
        reply.headers(fields);
      }
    }
    holdUntilAnswered(reply, hold.release);
  });
}
