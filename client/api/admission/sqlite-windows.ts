// Rate windows in a SQLite file (RETRYSAFE_LIMITS_DB, the embedded default): the instances
// of one host share the file, counted by rate-limiter-flexible's SQLite limiter on
// better-sqlite3. better-sqlite3 answers synchronously, so it runs in a worker thread of
// its own and never on the event loop: a file locked by another connection, a slow disk or
// a checkpoint makes the worker wait (up to its busy timeout), never the requests, the
// replays or /healthz of this instance. The caller's deadline (rate-windows.ts) bounds how
// long a request waits for the worker.
//
// The worker is JavaScript passed as a string: a worker thread gets no TypeScript loader
// (neither under the tests' runner nor from the compiled build), and this is all it does.
// A call that fails closes the file, and the next call opens it again, so a file that was
// repaired or replaced is taken up without a restart.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Rate } from './tenant-limits.js';
import { ratePrefix, WINDOWS_TABLE, type WindowDecision, type WindowStore } from './window-store.js';

const require = createRequire(import.meta.url);

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { mkdirSync } = require('node:fs');
const { dirname } = require('node:path');
const Database = require(workerData.modules.betterSqlite3);
const { RateLimiterSQLite, RateLimiterRes } = require(workerData.modules.rateLimiterFlexible);

let db;
const limiters = new Map();

function open() {
  if (db) return db;
  if (workerData.path !== ':memory:') mkdirSync(dirname(workerData.path), { recursive: true });
  const opened = new Database(workerData.path);
  try {
    opened.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
    opened.pragma('journal_mode = WAL');
    // Never OFF: NORMAL skips an fsync per commit; a crash can only lose counts of windows
    // that are over by the time the API is back.
    opened.pragma('synchronous = NORMAL');
  } catch (err) {
    opened.close();
    throw err;
  }
  db = opened;
  return db;
}

function reset() {
  try {
    if (db) db.close();
  } catch {}
  db = undefined;
  limiters.clear();
}

function limiter(prefix, quota, windowSeconds) {
  const known = limiters.get(prefix);
  if (known) return Promise.resolve(known);
  return new Promise((resolve, reject) => {
    const made = new RateLimiterSQLite(
      { storeClient: open(), storeType: 'better-sqlite3', tableName: workerData.table, keyPrefix: prefix, points: quota, duration: windowSeconds },
      (err) => {
        if (err) return reject(err);
        limiters.set(prefix, made);
        resolve(made);
      },
    );
  });
}

parentPort.on('message', async (m) => {
  try {
    if (m.op === 'check') {
      open().prepare('SELECT count(*) FROM sqlite_master').get();
      parentPort.postMessage({ id: m.id, ok: true });
      return;
    }
    const l = await limiter(m.prefix, m.quota, m.windowSeconds);
    if (m.op === 'give') {
      await l.reward(m.tenant, 1);
      parentPort.postMessage({ id: m.id, ok: true });
      return;
    }
    let res;
    let allowed = true;
    try {
      res = await l.consume(m.tenant, 1);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      res = err;
      allowed = false;
    }
    parentPort.postMessage({ id: m.id, ok: true, allowed, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext });
  } catch (err) {
    reset();
    parentPort.postMessage({ id: m.id, ok: false, message: String((err && err.message) || err), code: err && err.code });
  }
});
`;

interface Reply {
  id: number;
  ok: boolean;
  allowed?: boolean;
  remaining?: number;
  msBeforeNext?: number;
  message?: string;
  code?: string;
}

type Request = { op: 'check' } | { op: 'take' | 'give'; tenant: string; prefix: string; quota: number; windowSeconds: number };

/** What the worker said when it could not count: the file's error. */
export class SqliteWindowsError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteWindowsError';
  }
}

export class SqliteWindows implements WindowStore {
  readonly name = 'SQLite';
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve(reply: Reply): void; reject(err: Error): void }>();
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly path: string,
    /** How long the worker waits for another connection's lock before it fails the call. */
    private readonly busyTimeoutMs: number,
  ) {}

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path: this.path,
        busyTimeoutMs: this.busyTimeoutMs,
        table: WINDOWS_TABLE,
        modules: {
          betterSqlite3: require.resolve('better-sqlite3'),
          rateLimiterFlexible: require.resolve('rate-limiter-flexible'),
        },
      },
    });
    // The worker never keeps the process alive: close() ends it, and so does the process.
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      call?.resolve(reply);
    });
    const gone = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const call of this.pending.values()) call.reject(err);
      this.pending.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite worker exited (code ${code})`)));
    return worker;
  }

  private async call(request: Request): Promise<Reply> {
    if (this.closed) throw new Error('the rate windows are closed');
    this.worker ??= this.spawn();
    const id = ++this.nextId;
    const reply = await new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ id, ...request });
    });
    if (!reply.ok) throw new SqliteWindowsError(reply.message ?? 'unknown error', reply.code);
    return reply;
  }

  private rateFields(rate: Rate) {
    return { prefix: ratePrefix(rate), quota: rate.quota, windowSeconds: rate.windowSeconds };
  }

  async take(tenant: string, rate: Rate): Promise<WindowDecision> {
    const reply = await this.call({ op: 'take', tenant, ...this.rateFields(rate) });
    const msBeforeNext = reply.msBeforeNext ?? -1;
    return {
      allowed: reply.allowed === true,
      remaining: reply.allowed ? Math.max(0, reply.remaining ?? 0) : 0,
      resetMs: msBeforeNext >= 0 ? msBeforeNext : rate.windowSeconds * 1000,
    };
  }

  async give(tenant: string, rate: Rate): Promise<void> {
    await this.call({ op: 'give', tenant, ...this.rateFields(rate) });
  }

  async check(): Promise<void> {
    await this.call({ op: 'check' });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
