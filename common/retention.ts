// The namespace retention: how long Temporal keeps a closed workflow, and so how long an
// idempotency key is remembered after its operation ended. Read from the namespace itself
// (whoever set it: the launcher, an operator, Temporal Cloud), so `keyExpiresAt` is right
// on any cluster; cached, since it changes rarely and every finished answer needs it.
import type { Client } from '@temporalio/client';

/** Retention of `namespace` in milliseconds, as DescribeNamespace reports it. */
export async function describeRetention(client: Client, namespace: string): Promise<number> {
  const { config } = await client.workflowService.describeNamespace({ namespace });
  const ttl = config?.workflowExecutionRetentionTtl;
  const seconds = typeof ttl?.seconds === 'number' ? ttl.seconds : (ttl?.seconds?.toNumber() ?? 0);
  return seconds * 1000 + Math.floor((ttl?.nanos ?? 0) / 1_000_000);
}

export class RetentionCache {
  private value: number | undefined;
  private readAt = 0;
  private inFlight: Promise<number> | undefined;

  constructor(
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The cached retention, read again through `read` once it is older than the TTL. A failed
   * refresh keeps the last value known; only the very first read can fail the caller.
   */
  async get(read: () => Promise<number>): Promise<number> {
    if (this.value !== undefined && this.now() - this.readAt < this.ttlMs) return this.value;
    this.inFlight ??= read()
      .then((value) => {
        this.value = value;
        this.readAt = this.now();
        return value;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    try {
      return await this.inFlight;
    } catch (err) {
      if (this.value !== undefined) return this.value;
      throw err;
    }
  }
}
