// Rate windows in PostgreSQL (RETRYSAFE_LIMITS_URL): one table every API instance on every
// host shares, counted by rate-limiter-flexible's PostgreSQL limiter (one upsert per new
// operation: atomic, whichever instance runs it). Through a small pool of `pg` connections
// whose every wait is bounded by the store's deadline: connecting, waiting for a free
// connection, a statement. A server that is down, restarting or slow therefore fails a call
// within the deadline instead of holding it; rate-windows.ts decides what happens then.
import pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Rate } from './tenant-limits.js';
import { consumeOne, ratePrefix, WINDOWS_TABLE, type WindowDecision, type WindowStore } from './window-store.js';

/** Connections per instance: each call holds one for about a millisecond. */
const POOL_SIZE = 4;

export class PostgresWindows implements WindowStore {
  readonly name = 'PostgreSQL';
  private readonly pool: pg.Pool;
  /** One limiter per rate, created once its table exists (a failed creation is tried again). */
  private readonly limiters = new Map<string, Promise<RateLimiterPostgres>>();

  constructor(url: string, timeoutMs: number) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: POOL_SIZE,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      idleTimeoutMillis: 30_000,
      application_name: 'retrysafe-api',
    });
    // An idle connection the server dropped (a restart): the pool forgets it and the next
    // call connects again. Without a listener the error would end the process.
    this.pool.on('error', () => undefined);
  }

  private limiter(rate: Rate): Promise<RateLimiterPostgres> {
    const prefix = ratePrefix(rate);
    let limiter = this.limiters.get(prefix);
    if (!limiter) {
      limiter = new Promise<RateLimiterPostgres>((resolve, reject) => {
        const made: RateLimiterPostgres = new RateLimiterPostgres(
          {
            storeClient: this.pool,
            storeType: 'pool',
            tableName: WINDOWS_TABLE,
            keyPrefix: prefix,
            points: rate.quota,
            duration: rate.windowSeconds,
          },
          (err?: Error) => (err ? reject(err) : resolve(made)),
        );
      });
      this.limiters.set(prefix, limiter);
      limiter.catch(() => this.limiters.delete(prefix));
    }
    return limiter;
  }

  async take(tenant: string, rate: Rate): Promise<WindowDecision> {
    const limiter = await this.limiter(rate);
    return consumeOne(() => limiter.consume(tenant, 1), rate);
  }

  async give(tenant: string, rate: Rate): Promise<void> {
    await (await this.limiter(rate)).reward(tenant, 1);
  }

  /** Connects and creates the table (every rate's limiter shares it), so the first request finds it. */
  async check(): Promise<void> {
    await this.limiter({ quota: 1, windowSeconds: 1, spec: '1/s' });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
