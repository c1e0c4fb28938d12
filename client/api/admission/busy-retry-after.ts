// How long a tenant refused for its share of the in-flight limit is told to wait. A flood of
// clients that all come back after one second keeps this instance refusing as many requests
// a second as there are clients (hundreds), and every refusal, cheap as it is, takes CPU from
// the engine on the same cores. Places free up at a few a second per place a tenant holds,
// so more comebacks than that are refused again anyway: the more a tenant was refused in the
// last second for each place of its share, the later it is told to come back, from 1 s up to
// MAX_SECONDS. A tenant refused now and then still hears 1 s.

/** Refusals a second per place of the tenant's share that still get Retry-After: 1. */
const REFUSALS_PER_PLACE = 4;
export const MAX_SECONDS = 5;

export class BusyRetryAfter {
  /** Per tenant: the second being counted, its count, and the previous second's. */
  private readonly counts = new Map<string, { second: number; count: number; previous: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Counts a refusal of `tenant`, whose share is `share` places; answers Retry-After in seconds. */
  refused(tenant: string, share: number): number {
    const second = Math.floor(this.now() / 1000);
    let entry = this.counts.get(tenant);
    if (!entry) {
      entry = { second, count: 0, previous: 0 };
      this.counts.set(tenant, entry);
    }
    if (entry.second !== second) {
      entry.previous = entry.second === second - 1 ? entry.count : 0;
      entry.second = second;
      entry.count = 0;
    }
    entry.count++;
    const perSecond = Math.max(entry.count, entry.previous);
    return Math.min(MAX_SECONDS, Math.max(1, Math.ceil(perSecond / (REFUSALS_PER_PLACE * Math.max(1, share)))));
  }
}
