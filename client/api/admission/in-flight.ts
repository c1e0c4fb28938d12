// The engine bound of one API instance: how many distinct new operations it is starting
// or waiting on at once. Past it, the engine is busy as far as this instance can tell: a
// new operation it admitted would only queue behind the others inside Temporal, and
// every answer (another tenant's too) would take longer. Requests for an operation that
// is already in flight here (a client's retry racing its first try) join it: they add no
// work to the engine, so they are never refused.
//
// One tenant may hold at most three quarters of the places, so while one tenant floods
// the instance another still finds a place instead of a 503 (measured: without it, a
// tenant paying one at a time during another's flood was refused at every fifth try).
//
// Per instance and in memory on purpose: it bounds what this process asks of the engine,
// and it ends with the process. Tenants' quotas across instances are the rate limits' job.

/** A place held in the bound until the request's answer is sent. */
export interface Hold {
  /** Idempotent: the first call gives the place back. */
  release(): void;
}

/** The most places one tenant may hold: three quarters of the bound, at least one. */
export function tenantShare(bound: number): number {
  return Math.max(1, Math.floor((bound * 3) / 4));
}

export class InFlight {
  /** Requests holding each operation in flight, by workflow ID. */
  private readonly holders = new Map<string, { tenant: string; requests: number }>();
  /** Distinct operations in flight, by tenant. */
  private readonly byTenant = new Map<string, number>();
  readonly share: number;

  constructor(readonly bound: number) {
    this.share = tenantShare(bound);
  }

  /** Distinct operations in flight. */
  get size(): number {
    return this.holders.size;
  }

  /** Joins the operation when it is in flight here already. */
  join(workflowId: string): Hold | undefined {
    const entry = this.holders.get(workflowId);
    if (!entry) return undefined;
    return this.hold(workflowId, entry.tenant);
  }

  /** Takes a place for a new operation of `tenant`, or undefined when the bound or the tenant's share is reached. */
  enter(workflowId: string, tenant: string): Hold | undefined {
    const entry = this.holders.get(workflowId);
    if (entry) return this.hold(workflowId, entry.tenant);
    if (this.holders.size >= this.bound || (this.byTenant.get(tenant) ?? 0) >= this.share) return undefined;
    return this.hold(workflowId, tenant);
  }

  private hold(workflowId: string, tenant: string): Hold {
    const entry = this.holders.get(workflowId);
    if (entry) entry.requests++;
    else {
      this.holders.set(workflowId, { tenant, requests: 1 });
      this.byTenant.set(tenant, (this.byTenant.get(tenant) ?? 0) + 1);
    }
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const current = this.holders.get(workflowId);
        if (!current) return;
        if (--current.requests > 0) return;
        this.holders.delete(workflowId);
        const left = (this.byTenant.get(tenant) ?? 1) - 1;
        if (left > 0) this.byTenant.set(tenant, left);
        else this.byTenant.delete(tenant);
      },
    };
  }
}
