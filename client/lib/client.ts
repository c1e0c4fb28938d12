// The retrysafe client: one idempotency key per logical call, sent unchanged on every
// retry, so a retry after a lost answer can only ever find the operation the first
// request started. The call's flow:
//
//   POST (Prefer: wait=N) ──200──▶ succeeded → result | failed → OperationFailedError
//     │  network error, timeout, 429/502/503/504: same key, backoff, Retry-After floor
//     └──202──▶ poll Location (Retry-After apart) until terminal, or the deadline
//                → OperationPendingError(key); operations.wait(key) resumes
//
// A cancel needs no key of its own: the operation's key names it, and asking twice is
// harmless, so it is retried like a read.
import { DEFAULT_BASE_URL } from './constants.js';
import {
  ApiError,
  IdempotencyConflictError,
  OperationAlreadyCompletedError,
  OperationFailedError,
  OperationPendingError,
  type ProblemDetails,
} from './errors.js';
import { BUILT_IN_OPERATIONS, operationsOf } from './discovery.js';
import { isValidKey, MAX_KEY_LENGTH } from './keys.js';
import type { OperationPlurals, OperationRequests } from './operations.js';
import { isOperation, isOperationList } from './resource.js';
import { abortableSleep, DEFAULT_RETRY, parseRetryAfter, RETRYABLE_STATUSES, retryDelay, type RetryPolicy } from './retry.js';
import type { CallMeta, FailedOperation, ListFilter, Operation, OperationList, OperationResult } from './types.js';

/** Told before each retry: which attempt failed, why, and how long the client now waits. */
export interface RetryEvent {
  key: string | undefined;
  method: string;
  url: string;
  /** The attempt that failed (1 for the first request). */
  attempt: number;
  delayMs: number;
  error: ApiError;
}

export interface Hooks {
  onRetry?: (event: RetryEvent) => void;
  /** Called with each `processing` state seen while following an operation. */
  onPoll?: (operation: Operation) => void;
}

export interface ClientOptions extends Hooks {
  /** Default http://localhost:3000. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Deadline of one logical call (create, wait, get, list), retries and polls included. Default 30 s. */
  timeoutMs?: number;
  /** Timeout of one HTTP request, on top of the server-side wait it asked for. Default 10 s. */
  requestTimeoutMs?: number;
  /** Upper bound of `Prefer: wait` on a POST (the API allows 0-60). Default 10. */
  maxWaitSeconds?: number;
  /** Least time between two status polls (a longer Retry-After wins). Default 500 ms. */
  pollIntervalMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Aborts every call of this client. */
  signal?: AbortSignal;
  /** Injection points: tests drive backoff with a fake clock instead of sleeping. */
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

export interface CallOptions extends Hooks {
  /** The operation's key; a random UUID when absent. Reuse it to retry the same operation later. */
  idempotencyKey?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ReadOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface WaitOptions extends ReadOptions {
  onPoll?: (operation: Operation) => void;
}

interface Context extends Hooks {
  key: string | undefined;
  deadline: number;
  signal: AbortSignal | undefined;
  requests: number;
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  url: string;
}

/** Keeps a server-side wait clear of the caller's deadline, so the answer arrives before it. */
const WAIT_MARGIN_MS = 1_000;

/** `abc"d` → `"abc\"d"`: the IETF draft's Structured Field string form of the key. */
function structuredKey(key: string): string {
  return `"${key.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function operationPath(key: string): string {
  return `/v1/operations/${encodeURIComponent(key)}`;
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** A built-in operation's type. */
export type OperationType = keyof OperationRequests;

/** `rs.payments.create(...)`, `rs.transfers.create(...)`: one collection per built-in operation. */
export type OperationCollections = {
  readonly [T in OperationType as OperationPlurals[T]]: {
    create(params: OperationRequests[T], options?: CallOptions): Promise<OperationResult>;
  };
};

// The collections are made in the constructor from the generated table; their types come
// from it too (declaration merging).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface RetrySafe extends OperationCollections {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class RetrySafe {
  readonly baseUrl: string;
  readonly operations: {
    /** The operation in whatever status it is; does not throw for `failed`. */
    get(key: string, options?: ReadOptions): Promise<Operation>;
    /** Follows the operation until it ends or the deadline passes, like `create` does after a 202. */
    wait(key: string, options?: WaitOptions): Promise<OperationResult>;
    list(filter?: ListFilter, options?: ReadOptions): Promise<OperationList>;
    /**
     * Asks the operation to stop at its next step boundary; it then undoes what it did and
     * ends `failed` with `cancelled`. Resolves to the operation, `cancelRequested: true`.
     * Throws OperationAlreadyCompletedError when it had already ended.
     */
    cancel(key: string, options?: ReadOptions): Promise<Operation>;
  };

  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly maxWaitSeconds: number;
  private readonly pollIntervalMs: number;
  private readonly policy: RetryPolicy;
  private readonly signal: AbortSignal | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly hooks: Hooks;
  /** Collections of operations this client was not built with, found in the API's OpenAPI document. */
  private discovered: Promise<Map<string, string>> | undefined;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.maxWaitSeconds = Math.max(0, Math.min(60, options.maxWaitSeconds ?? 10));
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.signal = options.signal;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? abortableSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.hooks = { onRetry: options.onRetry, onPoll: options.onPoll };

    for (const [type, { plural }] of Object.entries(BUILT_IN_OPERATIONS)) {
      Object.defineProperty(this, plural, {
        value: { create: (params: object, opts?: CallOptions) => this.start(type as OperationType, params as never, opts) },
        enumerable: true,
      });
    }
    this.operations = {
      get: (key, opts) => this.get(key, opts),
      wait: (key, opts) => this.wait(key, opts),
      list: (filter, opts) => this.list(filter, opts),
      cancel: (key, opts) => this.cancel(key, opts),
    };
  }

  /**
   * Starts (or replays) an operation of any type: a built-in one, typed by its request, or
   * one the API has that this client was not built with (found in its /openapi.json).
   */
  start<T extends OperationType>(type: T, params: OperationRequests[T], options?: CallOptions): Promise<OperationResult>;
  start(type: string, params: Record<string, unknown>, options?: CallOptions): Promise<OperationResult>;
  async start(type: string, params: object, options?: CallOptions): Promise<OperationResult> {
    const plural = BUILT_IN_OPERATIONS[type]?.plural ?? (await this.collectionOf(type, options));
    return this.create(`/v1/${plural}`, params, options);
  }

  /** The collection of a type the API serves beyond the built-in ones, from its OpenAPI document (read once). */
  private async collectionOf(type: string, opts: ReadOptions = {}): Promise<string> {
    this.discovered ??= this.describeApi(opts).then((ops) => new Map([...ops].map(([t, d]) => [t, d.plural])));
    let plural: string | undefined;
    try {
      plural = (await this.discovered).get(type);
    } catch (err) {
      this.discovered = undefined;
      throw err;
    }
    if (plural === undefined) {
      throw new ApiError(`the API has no operation type ${type}`, undefined, null, 'unknown_operation_type', false);
    }
    return plural;
  }

  /** Every operation the API serves, as its OpenAPI document (GET /openapi.json) describes them. */
  async describeApi(opts: ReadOptions = {}): Promise<Map<string, import('./discovery.js').OperationDescription>> {
    const ctx = this.context(undefined, opts);
    const answer = await this.request(ctx, 'GET', '/openapi.json');
    if (answer.status !== 200) throw this.errorFor(answer, ctx);
    return operationsOf(answer.body);
  }

  private context(key: string | undefined, opts: { timeoutMs?: number; signal?: AbortSignal } & Hooks): Context {
    const signals = [this.signal, opts.signal].filter((s): s is AbortSignal => s !== undefined);
    return {
      key,
      deadline: this.now() + (opts.timeoutMs ?? this.timeoutMs),
      signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
      requests: 0,
      onRetry: opts.onRetry ?? this.hooks.onRetry,
      onPoll: opts.onPoll ?? this.hooks.onPoll,
    };
  }

  private async create(path: string, params: object, opts: CallOptions = {}): Promise<OperationResult> {
    // One key per logical call: generated once here, then sent unchanged on every retry.
    const key = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
    if (!isValidKey(key)) {
      throw new ApiError(
        `the idempotency key must be 1-${MAX_KEY_LENGTH} visible ASCII characters (no spaces)`,
        key,
        null,
        'idempotency_key_invalid',
        false,
      );
    }
    const ctx = this.context(key, opts);
    const answer = await this.request(ctx, 'POST', path, { start: params });
    if (answer.status !== 200 && answer.status !== 202) throw this.errorFor(answer, ctx);
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    let operation = this.operationFrom(answer, ctx);
    if (answer.status === 202) operation = await this.follow(ctx, operation, answer);
    return this.settle(operation, ctx, replayed);
  }

  private async get(key: string, opts: ReadOptions = {}): Promise<Operation> {
    const ctx = this.context(key, opts);
    const answer = await this.request(ctx, 'GET', operationPath(key));
    if (answer.status !== 200) throw this.errorFor(answer, ctx);
    return this.operationFrom(answer, ctx);
  }

  private async wait(key: string, opts: WaitOptions = {}): Promise<OperationResult> {
    const ctx = this.context(key, opts);
    const answer = await this.request(ctx, 'GET', operationPath(key));
    if (answer.status !== 200) throw this.errorFor(answer, ctx);
    const operation = await this.follow(ctx, this.operationFrom(answer, ctx), answer);
    return this.settle(operation, ctx, false);
  }

  private async list(filter: ListFilter = {}, opts: ReadOptions = {}): Promise<OperationList> {
    const ctx = this.context(undefined, opts);
    const query = new URLSearchParams();
    if (filter.status !== undefined) query.set('status', filter.status);
    if (filter.type !== undefined) query.set('type', filter.type);
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    if (filter.cursor !== undefined) query.set('cursor', filter.cursor);
    const qs = query.toString();
    const answer = await this.request(ctx, 'GET', `/v1/operations${qs ? `?${qs}` : ''}`);
    if (answer.status !== 200) throw this.errorFor(answer, ctx);
    if (!isOperationList(answer.body)) throw this.invalidResponse(answer, ctx);
    return answer.body;
  }

  private async cancel(key: string, opts: ReadOptions = {}): Promise<Operation> {
    const ctx = this.context(key, opts);
    const answer = await this.request(ctx, 'POST', `${operationPath(key)}/cancel`);
    if (answer.status === 200 || answer.status === 202) return this.operationFrom(answer, ctx);
    const error = this.errorFor(answer, ctx);
    if (answer.status === 409 && error.code === 'operation_already_completed') {
      throw new OperationAlreadyCompletedError(key, error.problem ?? { code: error.code }, error.attempts);
    }
    throw error;
  }

  /** Polls the operation until it is terminal; the deadline ends the wait, not the operation. */
  private async follow(ctx: Context, first: Operation, answer: Answer): Promise<Operation> {
    const key = ctx.key ?? first.key;
    const location = new URL(answer.headers.get('location') ?? first.links.self, answer.url).toString();
    let operation = first;
    let retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), this.now());
    while (operation.status === 'processing') {
      ctx.onPoll?.(operation);
      const delay = Math.max(retryAfterMs ?? 0, this.pollIntervalMs);
      if (this.now() + delay >= ctx.deadline) throw new OperationPendingError(key, operation);
      await this.sleep(delay, ctx.signal);
      let next: Answer;
      try {
        next = await this.request(ctx, 'GET', location);
      } catch (err) {
        // The operation exists and was last seen running: losing the API while following it
        // leaves it pending, to resume with wait(key), never to restart.
        if (err instanceof ApiError && err.retryable) {
          const pending = new OperationPendingError(key, operation);
          pending.cause = err;
          throw pending;
        }
        throw err;
      }
      if (next.status !== 200) throw this.errorFor(next, ctx);
      operation = this.operationFrom(next, ctx);
      retryAfterMs = parseRetryAfter(next.headers.get('retry-after'), this.now());
    }
    return operation;
  }

  private settle(operation: Operation, ctx: Context, replayed: boolean): OperationResult {
    if (operation.status === 'failed') {
      const error = operation.error ?? { code: 'unknown', message: 'the operation failed without an error', compensations: [] };
      throw new OperationFailedError({ ...operation, status: 'failed', error } as FailedOperation);
    }
    const meta: CallMeta = { key: ctx.key ?? operation.key, replayed, requests: ctx.requests };
    return Object.defineProperty(operation, 'meta', { value: meta, enumerable: false }) as OperationResult;
  }

  /**
   * One HTTP call with retries. Returns the first answer that is not worth retrying (any
   * status but 429/502/503/504); throws when the attempts or the deadline run out. `start`
   * is the body of a call that starts an operation: only those carry the Idempotency-Key.
   */
  private async request(
    ctx: Context,
    method: 'GET' | 'POST',
    pathOrUrl: string,
    opts: { start?: unknown } = {},
  ): Promise<Answer> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : this.baseUrl + pathOrUrl;
    const starting = opts.start !== undefined;
    for (let attempt = 1; ; attempt++) {
      ctx.signal?.throwIfAborted();
      const remaining = ctx.deadline - this.now();
      // The server may hold a start until the outcome is known; ask for less than what is left.
      const waitSeconds = starting
        ? Math.max(0, Math.min(this.maxWaitSeconds, Math.floor((remaining - WAIT_MARGIN_MS) / 1000)))
        : 0;
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'retrysafe-client/0.1' };
      if (this.apiKey !== undefined) headers.authorization = `Bearer ${this.apiKey}`;
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
          Math.max(1, Math.min(remaining, waitSeconds * 1000 + this.requestTimeoutMs)),
        );
        if (!RETRYABLE_STATUSES.has(answer.status)) return answer;
        failure = this.errorFor(answer, ctx, attempt);
        retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), this.now());
      } catch (err) {
        if (!(err instanceof ApiError) || !err.retryable) throw err;
        failure = err;
      }

      const delayMs = retryDelay(attempt - 1, this.policy, this.random, retryAfterMs);
      if (attempt >= this.policy.maxAttempts || this.now() + delayMs >= ctx.deadline) throw this.givenUp(failure, ctx, attempt);
      ctx.onRetry?.({ key: ctx.key, method, url, attempt, delayMs, error: failure });
      await this.sleep(delayMs, ctx.signal);
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
      const res = await this.fetchImpl(url, {
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
      if (timeout.signal.aborted) {
        throw new ApiError(`no answer from ${url} within ${timeoutMs} ms`, ctx.key, null, 'timeout', true, undefined, 1, {
          cause: err,
        });
      }
      throw new ApiError(
        `cannot reach ${url}: ${describeNetworkError(err)}`,
        ctx.key,
        null,
        'network_error',
        true,
        undefined,
        1,
        {
          cause: err,
        },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private operationFrom(answer: Answer, ctx: Context): Operation {
    if (!isOperation(answer.body)) throw this.invalidResponse(answer, ctx);
    return answer.body;
  }

  private invalidResponse(answer: Answer, ctx: Context): ApiError {
    return new ApiError(
      `the answer from ${answer.url} (HTTP ${answer.status}) is not what the retrysafe API sends`,
      ctx.key,
      answer.status,
      'invalid_response',
      false,
    );
  }

  private errorFor(answer: Answer, ctx: Context, attempts = ctx.requests): ApiError {
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
      attempts >= this.policy.maxAttempts ? `after ${attempts} attempts` : `at the deadline, after ${attempts} attempts`;
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

export function createClient(options: ClientOptions = {}): RetrySafe {
  return new RetrySafe(options);
}
