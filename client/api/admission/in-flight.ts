// The new operations one API instance is starting or waiting on, and who may add one. The
// instance as a whole takes up to its limit (adaptive-limit.ts: what the engine can take
// without slowing every answer); each tenant up to its max-min fair share of that limit
// (fair-shares.ts), and every tenant at least one place, so a tenant paying one at a time
// always finds a place during another's flood. A tenant counts as wanting more places when
// it asks, and for a moment after it was refused (its clients come back after Retry-After);
// one that holds places and wants no more keeps what it holds; an idle one lends its part.
// A tenant alone on the instance (no other asked for ten seconds) may go up to the ceiling:
// the limit protects the other tenants' latency, and there is none to protect; the
// adaptive limit still learns meanwhile, and binds from the next tenant's first request.
//
// A request for an operation already in flight here (a client's retry racing its first try)
// joins it: it adds no work to the engine and shares the one wait for its outcome. At most
// MAX_WAITERS_PER_KEY requests hold one operation at once; past that a duplicate is refused
// (429): each one still costs this instance a connection and a timer.
//
// Per instance and in memory on purpose: it bounds what this process asks of the engine,
// and it ends with the process. Tenants' quotas across instances are the rate limits' job.
import { maxMinShares } from './fair-shares.js';

/** Requests that may wait on one operation at once on one instance. */
export const MAX_WAITERS_PER_KEY = 64;
/** How long a refused tenant still counts as wanting more places: past its Retry-After. */
const WANTING_MS = 2_000;
/** How long a tenant that asked counts as present, so that another is not alone on the instance. */
export const PRESENT_MS = 10_000;

/** A place held until the request's answer is sent. */
export interface Hold {
  /** When the place was taken (performance.now()). */
  readonly since: number;
  /** Idempotent: the first call gives the place back. */
  release(): void;
}

export type JoinResult = { joined: Hold } | { full: true } | undefined;

export class InFlight {
  /** Requests holding each operation in flight, by workflow ID. */
  private readonly holders = new Map<string, { tenant: string; requests: number }>();
  /** Distinct operations in flight, by tenant. */
  private readonly byTenant = new Map<string, number>();
  /** When each tenant was last refused a place. */
  private readonly refusedAt = new Map<string, number>();
  /** When each tenant last asked for a place. */
  private readonly askedAt = new Map<string, number>();

  constructor(
    /** The instance's limit now (it moves). */
    private readonly limit: () => number,
    private readonly now: () => number = () => performance.now(),
    /**
     * The limit of a tenant alone on the instance (no other asked for PRESENT_MS): shedding
     * its work would spare no one, since the engine then queues only its own operations.
     * The adaptive limit binds from another tenant's first request on. Defaults to `limit`.
     */
    private readonly aloneLimit: () => number = limit,
  ) {}

  /** Distinct operations in flight. */
  get size(): number {
    return this.holders.size;
  }

  /** Operations `tenant` holds in flight. */
  heldBy(tenant: string): number {
    return this.byTenant.get(tenant) ?? 0;
  }

  /** Joins the operation when it is in flight here already; `full` when MAX_WAITERS_PER_KEY wait on it. */
  join(workflowId: string): JoinResult {
    const entry = this.holders.get(workflowId);
    if (!entry) return undefined;
    if (entry.requests >= MAX_WAITERS_PER_KEY) return { full: true };
    return { joined: this.hold(workflowId, entry.tenant) };
  }

  /** Takes a place for a new operation of `tenant`, or undefined when the tenant is at its share. */
  enter(workflowId: string, tenant: string): Hold | undefined {
    const held = this.heldBy(tenant);
    this.askedAt.set(tenant, this.now());
    if (held >= Math.max(1, this.shareOf(tenant))) {
      this.refusedAt.set(tenant, this.now());
      return undefined;
    }
    return this.hold(workflowId, tenant);
  }

  /** The share `tenant` gets when it asks now (the others as they are). */
  shareOf(tenant: string): number {
    const limit = this.limit();
    const demands = this.demands(tenant);
    // Alone (the usual case): the whole limit, without sorting anything.
    if (demands.size === 1) return this.othersPresent(tenant) ? limit : this.aloneLimit();
    return maxMinShares(limit, demands).get(tenant) ?? 0;
  }

  /** Whether a tenant other than `tenant` asked within PRESENT_MS (older entries are dropped). */
  private othersPresent(tenant: string): boolean {
    const now = this.now();
    let present = false;
    for (const [t, at] of this.askedAt) {
      if (now - at >= PRESENT_MS) this.askedAt.delete(t);
      else if (t !== tenant) present = true;
    }
    return present;
  }

  /** Each tenant's share if it asked now, for the tenants that hold, want or are named. */
  shares(named: Iterable<string> = []): Map<string, number> {
    const tenants = new Set([...named, ...this.byTenant.keys(), ...this.refusedAt.keys()]);
    return new Map([...tenants].map((t) => [t, this.shareOf(t)]));
  }

  private demands(asking: string): Map<string, number> {
    const now = this.now();
    const wanting = (t: string) => now - (this.refusedAt.get(t) ?? -Infinity) < WANTING_MS;
    const demands = new Map<string, number>([[asking, Infinity]]);
    for (const [t, held] of this.byTenant) if (t !== asking) demands.set(t, wanting(t) ? Infinity : held);
    for (const t of this.refusedAt.keys()) {
      if (t === asking || demands.has(t)) continue;
      if (wanting(t)) demands.set(t, Infinity);
      else this.refusedAt.delete(t);
    }
    return demands;
  }

  private hold(workflowId: string, tenant: string): Hold {
    const entry = this.holders.get(workflowId);
    if (entry) entry.requests++;
    else {
      this.holders.set(workflowId, { tenant, requests: 1 });
      this.byTenant.set(tenant, this.heldBy(tenant) + 1);
    }
    let held = true;
    return {
      since: this.now(),
      release: () => {
        if (!held) return;
        held = false;
        const current = this.holders.get(workflowId);
        if (!current) return;
        if (--current.requests > 0) return;
        this.holders.delete(workflowId);
        const left = this.heldBy(tenant) - 1;
        if (left > 0) this.byTenant.set(tenant, left);
        else this.byTenant.delete(tenant);
      },
    };
  }
}
