// Each tenant's count of new operations in the current fixed window, kept in one SQLite
// file that every API instance on the host opens: two instances serving one tenant spend
// one quota, not one each. A window starts at a multiple of its length since the epoch,
// so instances agree on it from their clocks alone (one host: one clock).
//
// One statement per request reads and bumps the count atomically, whichever instance
// runs it. WAL lets the instances' statements interleave, busy_timeout makes one wait
// for another's write instead of failing. synchronous=NORMAL (never OFF) skips the fsync
// of each commit: better-sqlite3 runs on the event loop, an fsync per new operation would
// stall every request of the instance, and a crash can only lose counts of windows that
// are over by the time the API is back.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../../common/env.js';
import type { Rate } from './tenant-limits.js';

/** How long one instance waits for another's write before the store counts as failed. */
const BUSY_TIMEOUT_MS = 1_000;

export interface WindowDecision {
  allowed: boolean;
  /** Quota left in this window after this request (0 when refused). */
  remaining: number;
  /** Whole seconds until the window ends and the quota is given back (at least 1). */
  resetSeconds: number;
}

export class RateWindows {
  private readonly db: Database.Database;
  private readonly bump: Database.Statement<{ tenant: string; windowMs: number; start: number; cap: number }, { used: number }>;

  constructor(path: string) {
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
    } catch (err) {
      // At start-up, so the instance refuses to run rather than run without its limits.
      throw new ConfigError([`RETRYSAFE_LIMITS_DB=${JSON.stringify(path)}: cannot open it (${(err as Error).message})`]);
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS tenant_windows (
        tenant TEXT NOT NULL,
        window_ms INTEGER NOT NULL,
        window_start INTEGER NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (tenant, window_ms)
      ) WITHOUT ROWID`);
    // `used` counts refused requests too, up to one past the quota: the count says whether
    // this request fitted, and never grows without bound during a flood.
    this.bump = this.db.prepare(`
      INSERT INTO tenant_windows (tenant, window_ms, window_start, used) VALUES (@tenant, @windowMs, @start, 1)
      ON CONFLICT (tenant, window_ms) DO UPDATE SET
        used = CASE WHEN window_start = excluded.window_start THEN MIN(used + 1, @cap) ELSE 1 END,
        window_start = excluded.window_start
      RETURNING used`);
  }

  /** Spends one unit of `tenant`'s quota in the window that holds `nowMs`, if one is left. */
  take(tenant: string, rate: Rate, nowMs: number): WindowDecision {
    const windowMs = rate.windowSeconds * 1000;
    const start = Math.floor(nowMs / windowMs) * windowMs;
    const { used } = this.bump.get({ tenant, windowMs, start, cap: rate.quota + 1 })!;
    return {
      allowed: used <= rate.quota,
      remaining: Math.max(0, rate.quota - used),
      resetSeconds: Math.max(1, Math.ceil((start + windowMs - nowMs) / 1000)),
    };
  }

  close(): void {
    this.db.close();
  }
}
