// Rate windows in this process's memory: what an instance counts on its own while the shared
// store cannot answer, and the per-instance bound on reads. rate-limiter-flexible's memory
// limiter, one per rate.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Rate } from './tenant-limits.js';
import { consumeOne, ratePrefix, type WindowDecision, type WindowStore } from './window-store.js';

export class MemoryWindows implements WindowStore {
  readonly name = 'this instance';
  private readonly limiters = new Map<string, RateLimiterMemory>();

  private limiter(rate: Rate): RateLimiterMemory {
    const prefix = ratePrefix(rate);
    let limiter = this.limiters.get(prefix);
    if (!limiter) {
      limiter = new RateLimiterMemory({ keyPrefix: prefix, points: rate.quota, duration: rate.windowSeconds });
      this.limiters.set(prefix, limiter);
    }
    return limiter;
  }

  take(tenant: string, rate: Rate): Promise<WindowDecision> {
    return consumeOne(() => this.limiter(rate).consume(tenant, 1), rate);
  }

  async give(tenant: string, rate: Rate): Promise<void> {
    await this.limiter(rate).reward(tenant, 1);
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {}
}
