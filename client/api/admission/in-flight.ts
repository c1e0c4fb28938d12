// The engine bound of one API instance: how many distinct new operations it is starting
// or waiting on at once. Past it, the engine is busy as far as this instance can tell: a
// new operation it admitted would only queue behind the others inside Temporal, and
// every answer (another tenant's too) would take longer. Requests for an operation that
// is already in flight here (a client's retry racing its first try) join it: they add no
// work to the engine, so they are never refused.
//
// Per instance and in memory on purpose: it bounds what this process asks of the engine,
// and it ends with the process. Tenants' shares are the rate limits' job.

/** A place held in the bound until the request's answer is sent. */
export interface Hold {
  /** Idempotent: the first call gives the place back. */
  release(): void;
}

export class InFlight {
  /** Requests holding each operation in flight, by workflow ID. */
  private readonly holders = new Map<string, number>();

  constructor(readonly bound: number) {}

  /** Distinct operations in flight. */
  get size(): number {
    return this.holders.size;
  }

  /** Joins the operation when it is in flight here already. */
  join(workflowId: string): Hold | undefined {
    if (!this.holders.has(workflowId)) return undefined;
    return this.hold(workflowId);
  }

  /** Takes a place for a new operation, or undefined when the bound is reached. */
  enter(workflowId: string): Hold | undefined {
    if (this.holders.has(workflowId)) return this.hold(workflowId);
    if (this.holders.size >= this.bound) return undefined;
    return this.hold(workflowId);
  }

  private hold(workflowId: string): Hold {
    this.holders.set(workflowId, (this.holders.get(workflowId) ?? 0) + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const left = (this.holders.get(workflowId) ?? 1) - 1;
        if (left > 0) this.holders.set(workflowId, left);
        else this.holders.delete(workflowId);
      },
    };
  }
}
