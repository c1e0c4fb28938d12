// One HTTP call of the client with its retries: the headers every call carries (the key
// only on a start, in its Structured Field form), a timeout per attempt on top of the
// server-side wait it asked for, back-off with Retry-After as its floor on network errors,
// timeouts and 429/502/503/504, and the answer or the problem it became. Whether to poll,
// and what an answer means for an operation, is the client's business (client.ts).
import { ApiError, IdempotencyConflictError, type ProblemDetails } from './errors.js';
import type { Hooks } from './options.js';
import { parseRetryAfter, RETRYABLE_STATUSES, retryDelay, type RetryPolicy } from './retry.js';

/** One logical call: its key, deadline and signal, and how many requests it has made. */
export interface Context extends Hooks {
  key: string | undefined;
  deadline: number;
  signal: AbortSignal | undefined;
  requests: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  url: string;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  requestTimeoutMs: number;
  maxWaitSeconds: number;
  policy: RetryPolicy;
  fetch: typeof fetch;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  now: () => number;
}

/** Keeps a server-side wait clear of the caller's deadline, so the answer arrives before it. */
const WAIT_MARGIN_MS = 1_000;

/** `abc"d` → `"abc\"d"`: the IETF draft's Structured Field string form of the key. */
function structuredKey(key: string): string {
  return `"${key.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export class Transport {
  constructor(private readonly o: TransportOptions) {}

  /**
   * One HTTP call with retries. Returns the first answer that is not worth retrying (any
   * status but 429/502/503/504); throws when the attempts or the deadline run out. `start`
   * is the body of a call that starts an operation: only those carry the Idempotency-Key.
   */
  async request(ctx: Context, method: 'GET' | 'POST', pathOrUrl: string, opts: { start?: unknown } = {}): Promise<Answer> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : this.o.baseUrl + pathOrUrl;
    // The API key goes to the API's own origin only (scheme, host and port), never elsewhere.
    const sendKey = this.o.apiKey !== undefined && sameOrigin(url, this.o.baseUrl);
    const starting = opts.start !== undefined;
    for (let attempt = 1; ; attempt++) {
      ctx.signal?.throwIfAborted();
      const remaining = ctx.deadline - this.o.now();
      // The server may hold a start until the outcome is known; ask for less than what is left.
      const waitSeconds = starting
        ? Math.max(0, Math.min(this.o.maxWaitSeconds, Math.floor((remaining - WAIT_MARGIN_MS) / 1000)))
        : 0;
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'retrysafe-client/0.1' };
      if (sendKey) headers.authorization = `Bearer ${this.o.apiKey}`;
      if (starting) {
        if (ctx.key !== undefined) headers['idempotency-key'] = structuredKey(ctx.key);
        headers['content-type'] = 'application/json';
        headers.prefer = `wait=${waitSeconds}`;
      }

      let failure: ApiError;
      let retryAfterMs: number | undefined;
      try {
        ctx.requests++;
        const answer = await this.attempt(
          ctx,
          url,
          method,
          headers,
          opts.start,
          Math.max(1, Math.min(remaining, waitSeconds * 1000 + this.o.requestTimeoutMs)),
        );
        if (!RETRYABLE_STATUSES.has(answer.status)) return answer;
        failure = this.errorFor(answer, ctx, attempt);
        retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), this.o.now());
      } catch (err) {
        if (!(err instanceof ApiError) || !err.retryable) throw err;
        failure = err;
      }

      const delayMs = retryDelay(attempt - 1, this.o.policy, this.o.random, retryAfterMs);
      if (attempt >= this.o.policy.maxAttempts || this.o.now() + delayMs >= ctx.deadline)
        throw this.givenUp(failure, ctx, attempt);
      ctx.onRetry?.({ key: ctx.key, method, url, attempt, delayMs, error: failure });
      await this.o.sleep(delayMs, ctx.signal);
    }
  }

  private async attempt(
    ctx: Context,
    url: string,
    method: string,
    headers: Record<string, string>,
    body: unknown,
    timeoutMs: number,
  ): Promise<Answer> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout.signal]) : timeout.signal;
    try {
      const res = await this.o.fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        redirect: 'manual',
      });
      const text = await res.text();
      let parsed: unknown = text;
      if (text !== '' && /json/.test(res.headers.get('content-type') ?? '')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { status: res.status, headers: res.headers, body: parsed, url };
    } catch (err) {
      if (ctx.signal?.aborted) throw ctx.signal.reason;
      const [message, code] = timeout.signal.aborted
        ? [`no answer from ${url} within ${timeoutMs} ms`, 'timeout']
        : [`cannot reach ${url}: ${describeNetworkError(err)}`, 'network_error'];
      throw new ApiError(message, ctx.key, null, code, true, undefined, 1, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  invalidResponse(answer: Answer, ctx: Context): ApiError {
    return new ApiError(
      `the answer from ${answer.url} (HTTP ${answer.status}) is not what the retrysafe API sends`,
      ctx.key,
      answer.status,
      'invalid_response',
      false,
    );
  }

  errorFor(answer: Answer, ctx: Context, attempts = ctx.requests): ApiError {
    const body = answer.body;
    const problem: ProblemDetails =
      typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string'
        ? (body as ProblemDetails)
        : {
            status: answer.status,
            code: `http_${answer.status}`,
            detail: typeof body === 'string' && body.length > 0 ? body.slice(0, 200) : `HTTP ${answer.status}`,
          };
    if (answer.status === 422 && problem.code === 'idempotency_key_reused' && ctx.key !== undefined) {
      return new IdempotencyConflictError(ctx.key, problem, attempts);
    }
    const detail = problem.detail ?? problem.title ?? `HTTP ${answer.status}`;
    return new ApiError(
      `${answer.status} ${problem.code}: ${detail}`,
      ctx.key,
      answer.status,
      problem.code,
      RETRYABLE_STATUSES.has(answer.status),
      problem,
      attempts,
    );
  }

  /** The last failure, once retrying stops: the outcome is unknown, the key is the way back. */
  private givenUp(failure: ApiError, ctx: Context, attempts: number): ApiError {
    const why =
      attempts >= this.o.policy.maxAttempts ? `after ${attempts} attempts` : `at the deadline, after ${attempts} attempts`;
    const hint = ctx.key !== undefined ? `; retrying with the same idempotency key (${ctx.key}) is safe` : '';
    return new ApiError(
      `${failure.message} (gave up ${why}${hint})`,
      ctx.key,
      failure.status,
      failure.code,
      true,
      failure.problem,
      attempts,
      {
        cause: failure.cause ?? failure,
      },
    );
  }
}
