// What a store of the tenants' rate windows does, whichever it is (PostgreSQL, SQLite, this
// process's memory): spend one unit of a tenant's quota in its current window, or give one
// back. The counting is rate-limiter-flexible's (rate-windows.ts says why): a window opens
// at a tenant's first new operation and lasts the rate's length; the store keeps its count
// and its end, so every instance on the store sees the same window.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Rate } from './tenant-limits.js';

export interface WindowDecision {
  allowed: boolean;
  /** Quota left in this window after this request (0 when refused). */
  remaining: number;
  /** Milliseconds until the window ends and its quota is given back. */
  resetMs: number;
}

export interface WindowStore {
  /** For logs: `PostgreSQL`, `SQLite`, `this instance`. */
  readonly name: string;
  /** Spends one unit of `tenant`'s quota if one is left; rejects when the store cannot answer. */
  take(tenant: string, rate: Rate): Promise<WindowDecision>;
  /** Gives back the unit a request took and did not use (it started nothing). */
  give(tenant: string, rate: Rate): Promise<void>;
  /** Resolves once the store answers (opens it, creates its table); rejects with why not. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** The key prefix of one rate: a tenant whose rate changes starts a new window. */
export function ratePrefix(rate: Rate): string {
  return `q${rate.quota}w${rate.windowSeconds}`;
}

/** One table for every rate, in either SQL store. */
export const WINDOWS_TABLE = 'retrysafe_rate_windows';

/** Whole seconds until the window ends, at least 1 (Retry-After, RateLimit's t). */
export function resetSeconds(decision: WindowDecision): number {
  return Math.max(1, Math.ceil(decision.resetMs / 1000));
}

/** The decision a rate-limiter-flexible limiter resolved (allowed) or rejected (refused) with. */
export function decisionOf(res: RateLimiterRes, allowed: boolean, rate: Rate): WindowDecision {
  return {
    allowed,
    remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
    resetMs: res.msBeforeNext >= 0 ? res.msBeforeNext : rate.windowSeconds * 1000,
  };
}

/** Runs a limiter's consume: its refusal is a decision, anything else it rejects with is the store failing. */
export async function consumeOne(consume: () => Promise<RateLimiterRes>, rate: Rate): Promise<WindowDecision> {
  try {
    return decisionOf(await consume(), true, rate);
  } catch (err) {
    if (err instanceof RateLimiterRes) return decisionOf(err, false, rate);
    throw err;
  }
}
