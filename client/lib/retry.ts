// Retry decisions, kept pure so they are tested with an injected clock and random source.
//
// Backoff is exponential with full jitter (delay = random(0, min(cap, base * 2^n))): clients
// that failed together spread out instead of retrying in lock-step. A `Retry-After` from
// the server is a floor, never shortened by the jitter.

export interface RetryPolicy {
  /** Requests per HTTP call, the first one included. */
  maxAttempts: number;
  /** Ceiling of the first retry's delay. */
  baseDelayMs: number;
  /** No backoff ceiling grows past this (a longer Retry-After still wins). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 250, maxDelayMs: 8_000 };

/**
 * Answers worth retrying with the same key: the request may not have been handled, or was
 * refused for now. 400/401/404/422 (and 500, a bug) would answer the same again.
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Full-jitter delay before retry number `retry` (0 for the first retry). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, in ms from `nowMs`. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** The delay before the next retry: the jittered backoff, floored by `Retry-After`. */
export function retryDelay(retry: number, policy: RetryPolicy, random: () => number, retryAfterMs: number | undefined): number {
  return Math.max(retryAfterMs ?? 0, backoffDelay(retry, policy, random));
}

/** Sleeps `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
