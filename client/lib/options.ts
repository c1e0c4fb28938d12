// What a caller can set on the client and on each call: deadlines, retries, hooks, and the
// injection points tests use to drive time.
import type { ApiError } from './errors.js';
import type { RetryPolicy } from './retry.js';
import type { Operation } from './types.js';

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
