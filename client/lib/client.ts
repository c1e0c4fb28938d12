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
//
// Each HTTP call, with its retries, goes through the transport (transport.ts).
import { DEFAULT_BASE_URL } from './constants.js';
import { ApiError, OperationAlreadyCompletedError, OperationFailedError, OperationPendingError } from './errors.js';
import { BUILT_IN_OPERATIONS, operationsOf, type OperationDescription } from './discovery.js';
import { isValidKey, MAX_KEY_LENGTH } from './keys.js';
import type { CallOptions, ClientOptions, Hooks, ReadOptions, WaitOptions } from './options.js';
import type { OperationPlurals, OperationRequests } from './operations.js';
import { isOperation, isOperationList } from './resource.js';
import { abortableSleep, DEFAULT_RETRY, parseRetryAfter } from './retry.js';
import { Transport, type Answer, type Context } from './transport.js';
import type { CallMeta, FailedOperation, ListFilter, Operation, OperationList, OperationResult } from './types.js';

export function operationPath(key: string): string {
  return `/v1/operations/${encodeURIComponent(key)}`;
}

/** A built-in operation's type. */
export type OperationType = keyof OperationRequests;

/** `rs.payments.create(...)`, `rs.transfers.create(...)`: one collection per built-in operation. */
export type OperationCollections = {
  readonly [T in OperationType as OperationPlurals[T]]: {
    create(params: OperationRequests[T], options?: CallOptions): Promise<OperationResult<T>>;
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

  private readonly http: Transport;
  private readonly timeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly signal: AbortSignal | undefined;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;
  private readonly hooks: Hooks;
  /** Collections of operations this client was not built with, found in the API's OpenAPI document. */
  private discovered: Promise<Map<string, string>> | undefined;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.signal = options.signal;
    this.sleep = options.sleep ?? abortableSleep;
    this.now = options.now ?? Date.now;
    this.hooks = { onRetry: options.onRetry, onPoll: options.onPoll };
    this.http = new Transport({
      baseUrl: this.baseUrl,
      apiKey: options.apiKey,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      maxWaitSeconds: Math.max(0, Math.min(60, options.maxWaitSeconds ?? 10)),
      policy: { ...DEFAULT_RETRY, ...options.retry },
      fetch: options.fetch ?? globalThis.fetch,
      sleep: this.sleep,
      random: options.random ?? Math.random,
      now: this.now,
    });

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
  start<T extends OperationType>(type: T, params: OperationRequests[T], options?: CallOptions): Promise<OperationResult<T>>;
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
  async describeApi(opts: ReadOptions = {}): Promise<Map<string, OperationDescription>> {
    const ctx = this.context(undefined, opts);
    const answer = await this.http.request(ctx, 'GET', '/openapi.json');
    if (answer.status !== 200) throw this.http.errorFor(answer, ctx);
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
        `the idempotency key must be 1-${MAX_KEY_LENGTH} visible ASCII characters (no spaces), and not "." or ".."`,
        key,
        null,
        'idempotency_key_invalid',
        false,
      );
    }
    const ctx = this.context(key, opts);
    const answer = await this.http.request(ctx, 'POST', path, { start: params });
    if (answer.status !== 200 && answer.status !== 202) throw this.http.errorFor(answer, ctx);
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    let operation = this.operationFrom(answer, ctx);
    if (answer.status === 202) operation = await this.follow(ctx, operation, answer);
    return this.settle(operation, ctx, replayed);
  }

  private async get(key: string, opts: ReadOptions = {}): Promise<Operation> {
    const ctx = this.context(key, opts);
    const answer = await this.http.request(ctx, 'GET', operationPath(key));
    if (answer.status !== 200) throw this.http.errorFor(answer, ctx);
    return this.operationFrom(answer, ctx);
  }

  private async wait(key: string, opts: WaitOptions = {}): Promise<OperationResult> {
    const ctx = this.context(key, opts);
    const answer = await this.http.request(ctx, 'GET', operationPath(key));
    if (answer.status !== 200) throw this.http.errorFor(answer, ctx);
    const operation = await this.follow(ctx, this.operationFrom(answer, ctx), answer);
    return this.settle(operation, ctx, false);
  }

  private async list(filter: ListFilter = {}, opts: ReadOptions = {}): Promise<OperationList> {
    const ctx = this.context(undefined, opts);
    const query = new URLSearchParams();
    if (filter.status !== undefined) query.set('status', filter.status);
    if (filter.type !== undefined) query.set('type', filter.type);
    if (filter.version !== undefined) query.set('version', filter.version);
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    if (filter.cursor !== undefined) query.set('cursor', filter.cursor);
    const qs = query.toString();
    const answer = await this.http.request(ctx, 'GET', `/v1/operations${qs ? `?${qs}` : ''}`);
    if (answer.status !== 200) throw this.http.errorFor(answer, ctx);
    if (!isOperationList(answer.body)) throw this.http.invalidResponse(answer, ctx);
    return answer.body;
  }

  private async cancel(key: string, opts: ReadOptions = {}): Promise<Operation> {
    const ctx = this.context(key, opts);
    const answer = await this.http.request(ctx, 'POST', `${operationPath(key)}/cancel`);
    if (answer.status === 200 || answer.status === 202) return this.operationFrom(answer, ctx);
    const error = this.http.errorFor(answer, ctx);
    if (answer.status === 409 && error.code === 'operation_already_completed') {
      throw new OperationAlreadyCompletedError(key, error.problem ?? { code: error.code }, error.attempts);
    }
    throw error;
  }

  /** Polls the operation until it is terminal; the deadline ends the wait, not the operation. */
  private async follow(ctx: Context, first: Operation, answer: Answer): Promise<Operation> {
    const key = ctx.key ?? first.key;
    // Only a Location on the API's own origin is followed: one elsewhere (a proxy's rewrite,
    // an answer tampered with) would be sent the API key. The resource's own path is the way.
    const told = new URL(answer.headers.get('location') ?? first.links.self, answer.url);
    const own = new URL(this.baseUrl + operationPath(key));
    const location = (told.origin === own.origin ? told : own).toString();
    let operation = first;
    let retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), this.now());
    while (operation.status === 'processing') {
      ctx.onPoll?.(operation);
      const delay = Math.max(retryAfterMs ?? 0, this.pollIntervalMs);
      if (this.now() + delay >= ctx.deadline) throw new OperationPendingError(key, operation);
      await this.sleep(delay, ctx.signal);
      let next: Answer;
      try {
        next = await this.http.request(ctx, 'GET', location);
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
      if (next.status !== 200) throw this.http.errorFor(next, ctx);
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

  private operationFrom(answer: Answer, ctx: Context): Operation {
    if (!isOperation(answer.body)) throw this.http.invalidResponse(answer, ctx);
    return answer.body;
  }
}

export function createClient(options: ClientOptions = {}): RetrySafe {
  return new RetrySafe(options);
}
