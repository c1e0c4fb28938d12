// The receiving side of the idempotency contract. One SQLite transaction per request:
// claim the key (primary key), compare fingerprints, apply the effect, store the
// response. A crash anywhere before COMMIT leaves neither the effect nor the key; after
// COMMIT both exist, so a retry replays the stored answer instead of acting twice.
import type Database from 'better-sqlite3';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fingerprintOf } from '../../common/http/fingerprint.js';
import { PROBLEM_CONTENT_TYPE, Problem } from '../../common/http/problem.js';
import { InFlightGuard } from './in-flight.js';
import { killConnection, type FaultInjector } from './faults.js';
import { runPeriodically } from './periodic.js';

/** What "the same request" means here: the same endpoint with the same validated body. */
export function requestFingerprint(endpoint: string, body: unknown): string {
  return fingerprintOf({ endpoint, body: body ?? null });
}

/** What an effect decides; business errors are responses too, and are stored. */
export interface EffectResponse {
  status: number;
  body: unknown;
}

export interface Execution {
  status: number;
  contentType: string;
  /** The JSON text sent, byte for byte the same on every replay. */
  payload: string;
  /** True when the answer came from the store rather than from running the effect. */
  replayed: boolean;
}

export interface ExecuteRequest {
  key: string;
  /** Names the operation, e.g. `POST /charges`; part of the fingerprint. */
  endpoint: string;
  /** The validated request body. */
  body: unknown;
  /**
   * Runs inside the transaction. Return business outcomes (they are stored and replayed);
   * throw only for failures that must leave no trace (the transaction rolls back).
   * `claimedAt` is when the key was claimed, on the clock the key's TTL is measured by.
   */
  effect: (claimedAt: number) => EffectResponse;
  /** Awaited after the key is marked in flight and before the transaction (faults). */
  beforeCommit?: () => Promise<void>;
  /** Called after the transaction committed an effect, before it is answered (faults). */
  afterCommit?: () => void;
}

interface KeyRow {
  key: string;
  endpoint: string;
  fingerprint: string;
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_at: number;
}

export interface IdempotencyOptions {
  /** How long a key is remembered; afterwards it is purged and may be used again. */
  ttlMs: number;
  /** Table holding the keys; each service has its own database, so the default fits. */
  table?: string;
  now?: () => number;
}

export class IdempotentExecutor {
  readonly inFlight = new InFlightGuard();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly table: string;
  private readonly run: (req: ExecuteRequest, fingerprint: string) => Execution;
  private readonly purgeStmt: Database.Statement<[number]>;

  constructor(
    private readonly db: Database.Database,
    opts: IdempotencyOptions,
  ) {
    if (!(opts.ttlMs > 0)) throw new Error('ttlMs must be positive');
    this.ttlMs = opts.ttlMs;
    this.now = opts.now ?? Date.now;
    this.table = opts.table ?? 'idempotency_keys';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.table)) throw new Error(`bad table name ${this.table}`);
    const t = this.table;
    db.exec(`
      CREATE TABLE IF NOT EXISTS ${t} (
        key          TEXT PRIMARY KEY,
        endpoint     TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        status       INTEGER,
        content_type TEXT,
        body         TEXT,
        created_at   INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS ${t}_created_at ON ${t} (created_at);
    `);
    const select = db.prepare<[string], KeyRow>(`SELECT * FROM ${t} WHERE key = ?`);
    const remove = db.prepare<[string]>(`DELETE FROM ${t} WHERE key = ?`);
    const claim = db.prepare<[string, string, string, number]>(
      `INSERT INTO ${t} (key, endpoint, fingerprint, created_at) VALUES (?, ?, ?, ?)`,
    );
    const store = db.prepare<[number, string, string, string]>(
      `UPDATE ${t} SET status = ?, content_type = ?, body = ? WHERE key = ?`,
    );
    this.purgeStmt = db.prepare<[number]>(`DELETE FROM ${t} WHERE created_at <= ?`);

    const tx = db.transaction((req: ExecuteRequest, fingerprint: string): Execution => {
      const now = this.now();
      let row = select.get(req.key);
      if (row && row.created_at <= now - this.ttlMs) {
        // Expired but not purged yet: the window is exact, not timer-granular.
        remove.run(req.key);
        row = undefined;
      }
      if (row) {
        if (row.fingerprint !== fingerprint) {
          throw new Problem(
            422,
            'idempotency_key_reused',
            'this Idempotency-Key was already used with a different request; use a new key for a new request',
          );
        }
        if (row.status === null || row.body === null || row.content_type === null) {
          // Cannot be seen after a commit; kept as a guard should the schema ever be shared.
          throw inProgress();
        }
        return { status: row.status, contentType: row.content_type, payload: row.body, replayed: true };
      }
      claim.run(req.key, req.endpoint, fingerprint, now);
      const response = req.effect(now);
      const contentType = response.status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json';
      const payload = JSON.stringify(response.body);
      store.run(response.status, contentType, payload, req.key);
      return { status: response.status, contentType, payload, replayed: false };
    });
    // IMMEDIATE takes the write lock at BEGIN: two processes cannot both read "no row".
    this.run = (req, fingerprint) => tx.immediate(req, fingerprint);
  }

  async execute(req: ExecuteRequest): Promise<Execution> {
    const fingerprint = requestFingerprint(req.endpoint, req.body);
    if (!this.inFlight.tryAcquire(req.key)) throw inProgress();
    try {
      await req.beforeCommit?.();
      let execution: Execution;
      try {
        execution = this.run(req, fingerprint);
      } catch (err) {
        if (isBusy(err)) throw inProgress();
        throw err;
      }
      if (!execution.replayed) req.afterCommit?.();
      return execution;
    } finally {
      this.inFlight.release(req.key);
    }
  }

  /** Deletes keys older than the TTL; the effects' own ledgers are kept. */
  purgeExpired(): number {
    return this.purgeStmt.run(this.now() - this.ttlMs).changes;
  }

  /** Purges now and then every min(TTL/10, 60 s); call the returned function to stop. */
  startPurging(onError: (err: unknown) => void = () => {}): () => void {
    return runPeriodically(() => this.purgeExpired(), Math.min(Math.floor(this.ttlMs / 10), 60_000), onError);
  }
}

function inProgress(): Problem {
  return new Problem(
    409,
    'request_in_progress',
    'a request with this Idempotency-Key is still being processed; retry later with the same key',
    { headers: { 'retry-after': '1' } },
  );
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/**
 * Sends an execution's answer, marking replays with `Idempotent-Replayed: true`. When
 * this request committed an effect and the drop fault fires, the answer is lost instead:
 * the connection closes with nothing sent, the situation retries exist for.
 */
export function sendExecution(
  request: FastifyRequest,
  reply: FastifyReply,
  execution: Execution,
  faults?: FaultInjector,
): FastifyReply {
  if (!execution.replayed && faults?.dropsResponse(request.log, { status: execution.status })) {
    killConnection(request, reply);
    return reply;
  }
  return reply
    .code(execution.status)
    .type(execution.contentType)
    .header('idempotent-replayed', execution.replayed ? 'true' : 'false')
    .send(execution.payload);
}
