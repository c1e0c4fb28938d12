// Each tenant's quota of new operations per window, shared by every API instance through
// one store: PostgreSQL (RETRYSAFE_LIMITS_URL) across hosts, a SQLite file
// (RETRYSAFE_LIMITS_DB, the embedded default) across the instances of one host. This module
// is what stands between a request and that store, so that no store ever holds a request
// up:
//
//   the tenant's window already spent (this instance saw it) ─▶ refused at once, no call
//   the store down, and not yet time to try it again ────────▶ counted here
//   as many calls outstanding as MAX_PENDING ────────────────▶ counted here (no queue forms)
//   else one call, within the store's deadline ─┬─ answered ─▶ its decision
//                                                └─ failed or late ─▶ counted here; the store
//                                                   is down until a retry (1 s, doubling to 30 s)
//
// "Counted here" is the stated fallback: while the store cannot answer, each instance
// counts every tenant's quota on its own, in memory, so a tenant may get up to its quota
// once per instance (and the in-flight limit, which is per instance anyway, still holds the
// engine below saturation). The log says so once when it starts and once when the store
// answers again, never per request; a gauge says which is in force.
//
// Why rate-limiter-flexible rather than a store of our own: it has the three stores the
// project needs (PostgreSQL, SQLite, memory) behind one interface, with the same atomic
// counting in each (one upsert a request) and its tables' expiry; what it lacks is only
// what is wrapped here — a deadline it can stop waiting on without a queue building up
// behind (its own timeout wrapper abandons the call but keeps it queued in the pool), a
// fallback that says when it is in force (its insurance limiter is silent), and the cheap
// refusal of a tenant whose window is spent (its in-memory block exists, but inside the
// SQLite worker a refusal would still cost a round trip).
import type { Logger } from 'pino';
import { MemoryWindows } from './memory-windows.js';
import type { Rate } from './tenant-limits.js';
import type { WindowDecision, WindowStore } from './window-store.js';

/** Store calls outstanding at once; past it, requests are counted here until some return. */
export const MAX_PENDING = 32;
const FIRST_RETRY_MS = 1_000;
/** The check at start-up may take longer than a request's call: it also starts the store (a worker, a pool). */
const CHECK_DEADLINE_MS = 5_000;
const LAST_RETRY_MS = 30_000;

export type WindowsState = 'shared' | 'instance';

export interface RateWindowsOptions {
  /** How long one call may take before the store counts as down. */
  timeoutMs: number;
  logger: Logger;
  /** Told of each change between the shared store and the per-instance fallback. */
  onState?(state: WindowsState): void;
  now?: () => number;
}

class DeadlineError extends Error {
  constructor(store: string, ms: number) {
    super(`${store} did not answer within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

export class RateWindows {
  private readonly local = new MemoryWindows();
  /** Per tenant and rate: until when this instance knows the window is spent. */
  private readonly spent = new Map<string, number>();
  private state: WindowsState = 'shared';
  private retryAt = 0;
  private retryMs = FIRST_RETRY_MS;
  private probing = false;
  private pending = 0;
  private readonly now: () => number;

  constructor(
    private readonly store: WindowStore,
    private readonly opts: RateWindowsOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Which count is in force: the shared store's, or this instance's own. */
  get inForce(): WindowsState {
    return this.state;
  }

  /** Opens the store without holding anything up; a store that cannot open starts the fallback (logged). */
  async check(): Promise<void> {
    try {
      await this.call(() => this.store.check(), Math.max(CHECK_DEADLINE_MS, this.opts.timeoutMs));
      this.up();
    } catch (err) {
      this.down(err);
    }
  }

  /** Spends one unit of `tenant`'s quota if one is left. Never rejects. */
  async take(tenant: string, rate: Rate): Promise<WindowDecision> {
    const key = `${tenant} ${rate.spec}`;
    const now = this.now();
    const until = this.spent.get(key);
    if (until !== undefined) {
      if (now < until) return { allowed: false, remaining: 0, resetMs: until - now };
      this.spent.delete(key);
    }
    const { decision, shared } = await this.decide(tenant, rate);
    // The store's last unit, or none: nothing is left in this window, and asking again would
    // only cost a call. (This instance's own count is as cheap as the mark: no mark for it,
    // so the store is asked again as soon as it is back.)
    if (shared && decision.remaining === 0) this.spent.set(key, this.now() + decision.resetMs);
    return decision;
  }

  /** Gives back a unit taken by a request that started nothing. Never rejects. */
  async give(tenant: string, rate: Rate): Promise<void> {
    this.spent.delete(`${tenant} ${rate.spec}`);
    if (this.state === 'instance') {
      await this.local.give(tenant, rate);
      return;
    }
    try {
      await this.call(() => this.store.give(tenant, rate));
    } catch (err) {
      // Not worth a fallback: the window keeps one unit too few until it ends.
      this.opts.logger.debug({ err }, 'rate windows: giving a unit back failed');
    }
  }

  private async decide(tenant: string, rate: Rate): Promise<{ decision: WindowDecision; shared: boolean }> {
    const here = async () => ({ decision: await this.local.take(tenant, rate), shared: false });
    if (this.state === 'instance' && (this.now() < this.retryAt || this.probing)) return here();
    if (this.pending >= MAX_PENDING) return here();
    const probe = this.state === 'instance';
    if (probe) this.probing = true;
    try {
      const decision = await this.call(() => this.store.take(tenant, rate));
      this.up();
      return { decision, shared: true };
    } catch (err) {
      this.down(err);
      return here();
    } finally {
      if (probe) this.probing = false;
    }
  }

  /** One store call within the deadline; it counts as outstanding until it really returns. */
  private call<T>(run: () => Promise<T>, deadlineMs = this.opts.timeoutMs): Promise<T> {
    this.pending++;
    const work = run().finally(() => this.pending--);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      // After the deadline, one more turn for I/O that already arrived: an event loop that
      // was busy (a GC pause, a long task) runs its timers before it reads its sockets, and
      // an answer that came in time must not count as late.
      timer = setTimeout(() => setImmediate(() => reject(new DeadlineError(this.store.name, deadlineMs))), deadlineMs);
    });
    // An answer that comes after the deadline is dropped, not left to reject unheard.
    work.catch(() => undefined);
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  private up(): void {
    this.retryMs = FIRST_RETRY_MS;
    if (this.state === 'shared') return;
    this.state = 'shared';
    this.opts.logger.info({ store: this.store.name }, `rate windows: ${this.store.name} answers again; quotas are shared again`);
    this.opts.onState?.('shared');
  }

  /** The store failed a call: the fallback starts, or (a failed retry) goes on for longer. */
  private down(err: unknown): void {
    // Calls that were already out when the store went down fail too: only the first, and a failed retry, move the next retry.
    if (this.state === 'instance' && !this.probing) return;
    this.retryAt = this.now() + this.retryMs;
    this.retryMs = Math.min(LAST_RETRY_MS, this.retryMs * 2);
    if (this.state === 'instance') return;
    this.state = 'instance';
    this.opts.logger.warn(
      { store: this.store.name, err },
      `rate windows: ${this.store.name} cannot answer; until it does, this instance counts each tenant's quota on its own`,
    );
    this.opts.onState?.('instance');
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
