// What the bank's and the reservation service's own test harnesses share: the app on its
// own SQLite file, listening on 127.0.0.1:0, a fetch-based caller that can send bad keys
// and raw bodies, the problem-document assertion, the failure of an answer lost on the
// way, unique keys, a clock the test moves, and the service as a real process.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, expect } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import type { SandboxDeps } from '../../downstream/shared/app.js';
import type { SandboxApp } from '../../downstream/shared/http.js';
import { useForFile } from './use-for-file.js';

// The sandboxes' suites import their sleep from here, with the rest of the harness.
export { setTimeout as sleep } from 'node:timers/promises';

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

export type Call = (
  method: string,
  path: string,
  opts?: { body?: unknown; raw?: string; key?: string; headers?: Record<string, string> },
) => Promise<Answer>;

/** A sandbox app under test: its SQLite file in a fresh temp dir (or `dir`), served on loopback. */
export interface SandboxUnderTest {
  url: string;
  app: SandboxApp;
  db: Database.Database;
  dbPath: string;
  /** JSON request; `key` sets Idempotency-Key (as is, so tests can send bad ones). */
  call: Call;
  /** Idempotency-key rows for a key: 0 when the key was never spent. */
  keyRows(key: string): number;
  putFaults(faults: Record<string, unknown>): Promise<Answer>;
  /** Stops the app, closes the file, and removes the temp dir (not a `dir` the test gave). */
  close(): Promise<void>;
}

export async function startSandboxApp(
  name: string,
  build: (db: Database.Database) => SandboxApp,
  opts: { busyTimeoutMs?: number; dir?: string },
): Promise<SandboxUnderTest> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), `retrysafe-${name}-`));
  const dbPath = join(dir, `${name}.db`);
  const db = openDatabase(dbPath, { busyTimeoutMs: opts.busyTimeoutMs ?? 5000 });
  const app = build(db);
  const url = await listenOnLoopback(app);
  const call = caller(url);
  return {
    url,
    app,
    db,
    dbPath,
    call,
    keyRows: (key) => (db.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?').get(key) as { n: number }).n,
    putFaults: (faults) => call('PUT', '/_faults', { body: faults }),
    close: async () => {
      await app.close();
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a test may set of a service's deps, and where its file is (`dir`) and how long it waits for the lock. */
export type ServiceOptions<D> = Partial<Omit<D, 'db'>> & { busyTimeoutMs?: number; dir?: string };

/** A service from its `buildApp`: the test's options over quiet defaults (no faults, keys kept a week, seeded). */
export function startSandboxService<D extends SandboxDeps>(
  name: string,
  buildApp: (deps: D) => SandboxApp,
  opts: ServiceOptions<D>,
): Promise<SandboxUnderTest> {
  const { dir: _dir, busyTimeoutMs: _busy, ...deps } = opts;
  return startSandboxApp(
    name,
    (db) => buildApp({ faults: false, keyTtlMs: 7 * 24 * 3600_000, seed: true, ...deps, db } as SandboxDeps as D),
    opts,
  );
}

/** The service for the file that calls this: started in its beforeAll, closed in its afterAll. */
export function useSandbox<T extends SandboxUnderTest>(what: string, start: () => Promise<T>): T {
  return useForFile(what, start, (service) => service.close());
}

/** Fresh temp dirs for the file that calls this (`retrysafe-<name>-…`), all removed after its tests. */
export function useTempDirs(name: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `retrysafe-${name}-`));
    dirs.push(dir);
    return dir;
  };
}

/** Runs `test` on a service started for it alone, and closes the service however `test` ends. */
export async function withService<T extends SandboxUnderTest>(
  start: Promise<T>,
  test: (service: T) => Promise<void>,
): Promise<void> {
  const service = await start;
  try {
    await test(service);
  } finally {
    await service.close();
  }
}

/** Listens on a free loopback port; returns the base URL. */
async function listenOnLoopback(app: SandboxApp): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

/** JSON request; `key` sets Idempotency-Key as is, so tests can send bad ones. */
export function caller(url: string): Call {
  return async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    let payload: string | undefined;
    if (o.raw !== undefined) payload = o.raw;
    else if (o.body !== undefined) payload = JSON.stringify(o.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    if (o.key !== undefined) headers['idempotency-key'] = o.key;
    const res = await fetch(url + path, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { unparsed: text };
    }
    return { status: res.status, headers: res.headers, body, text };
  };
}

/** What `networkError` says of an answer the service dropped: the connection reset or closed under the call. */
export const LOST_ANSWER = /ECONNRESET|UND_ERR_SOCKET|EPIPE/;

/** The network-level failure a client sees (a connection closed without an answer), or undefined when an answer came back. */
export async function networkError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? String(err);
  }
}

/** Asserts the answer is a problem document with this status and code; returns its body. */
export function expectProblem(answer: Answer, status: number, code: string): Record<string, unknown> {
  expect({ status: answer.status, code: answer.body.code, text: answer.text }).toMatchObject({ status, code });
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code,
  });
  expect(answer.text).not.toMatch(/stack|\n\s+at /);
  return answer.body;
}

/** A key nobody else in the run uses, shaped like a derived downstream key. */
export function sandboxKey(step: string): string {
  return `test/${randomUUID()}/${step}`;
}

/** A clock the test moves by hand: expiry and key TTL without sleeping. */
export function manualClock(start = Date.parse('2030-01-01T00:00:00Z')) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

export interface SandboxProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

const root = resolve(import.meta.dirname, '../..');

/**
 * Runs a sandbox's entry point as its own process (tsx signalled directly, not through
 * npx, so a signal reaches the service and its exit code is the test's to read). Resolves
 * once it logs where it listens; rejects with its exit code and output if it exits first.
 */
export function startSandboxProcess(name: string, entry: string, env: Record<string, string>): Promise<SandboxProcess> {
  const child = spawn(join(root, 'node_modules', '.bin', 'tsx'), [entry], {
    cwd: root,
    env: { ...process.env, LOG_PRETTY: '', SANDBOX_FAULTS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: tsx runs the service in a child of its own, which a SIGKILL of
    // tsx alone would leave running.
    detached: true,
  });
  let out = '';
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`${name} did not start:\n${out}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = new RegExp(`${name} listening at (http://[^"\\s]+)`).exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ child, url: match[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${name} exited with ${code}:\n${out}`), { exitCode: code, output: out }));
    });
  });
}

/** Signals the process and resolves with its exit code. */
export function stopSandboxProcess(running: SandboxProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolveStop) => {
    running.child.once('exit', (code) => resolveStop(code));
    running.child.kill(signal);
  });
}
