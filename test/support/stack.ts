// The parts of a stack in this process, for end-to-end tests: the sandbox bank and the
// reservation service on real SQLite files and real ports, a worker on the shared dev
// server with its own task queue, a Temporal client; and the handles a test drives a
// sandbox with, wherever it runs (here, or as a process: full-stack.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { buildApp as buildBankApp } from '../../downstream/bank/app.js';
import { buildApp as buildReservationsApp } from '../../downstream/reservations/app.js';
import { openDatabase } from '../../downstream/shared/db.js';
import type { WorkerWebhooks } from '../../worker/config.js';
import { createWorker } from '../../worker/create.js';
import { caller } from './sandbox-harness.js';

export interface Faults {
  dropResponseAfterCommit?: number;
  failBeforeCommit?: number;
  delayMs?: number;
  down?: boolean;
}

type Json = { status: number; body: Record<string, unknown> };

interface SandboxHandle {
  url: string;
  dbFile: string;
  setFaults(faults: Faults): Promise<void>;
  close(): Promise<void>;
}

export interface BankHandle extends SandboxHandle {
  balance(account: string): Promise<number>;
  openAccount(id: string, balance: number, currency?: string): Promise<void>;
  charge(key: string): Promise<Json>;
}

export interface ReservationsHandle extends SandboxHandle {
  setStock(sku: string, available: number): Promise<void>;
  stock(sku: string): Promise<{ available: number; held: number }>;
  reservation(key: string): Promise<Json>;
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

interface SandboxApp {
  listen(opts: { host: string; port: number }): Promise<string>;
  close(): Promise<unknown>;
  server: { address(): unknown };
}

/** Serves a sandbox app on a real port with its own SQLite file. */
async function serveSandbox(
  name: string,
  build: (db: ReturnType<typeof openDatabase>) => SandboxApp,
  opts: { port?: number; dbFile?: string },
): Promise<{ url: string; dbFile: string; close(): Promise<void> }> {
  const dbFile = opts.dbFile ?? join(mkdtempSync(join(inject('tmpRoot'), `${name}-`)), `${name}.db`);
  const db = openDatabase(dbFile);
  const app = build(db);
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    dbFile,
    async close() {
      await app.close();
      db.close();
    },
  };
}

function check(res: Json, what: string): Json {
  if (res.status >= 300) throw new Error(`${what} → ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** A sandbox's set-up, read and fault endpoints, spoken to over HTTP. */
function sandboxHandle(name: string, sandbox: { url: string; dbFile: string; close(): Promise<void> }) {
  const call = caller(sandbox.url);
  const json = (method: string, path: string, body?: unknown): Promise<Json> =>
    call(method, path, body === undefined ? {} : { body });
  return {
    ...sandbox,
    json,
    async setFaults(faults: Faults) {
      check(await json('PUT', '/_faults', faults), `${name}: PUT /_faults`);
    },
  };
}

/** The bank at `url`, whether it runs in this process or as a process of its own. */
export function bankHandle(sandbox: { url: string; dbFile: string; close(): Promise<void> }): BankHandle {
  const bank = sandboxHandle('bank', sandbox);
  return {
    url: bank.url,
    dbFile: bank.dbFile,
    close: bank.close,
    setFaults: bank.setFaults,
    async balance(account) {
      return Number(
        check(await bank.json('GET', `/accounts/${encodeURIComponent(account)}`), `GET /accounts/${account}`).body.balance,
      );
    },
    async openAccount(id, balance, currency = 'EUR') {
      check(await bank.json('POST', '/accounts', { id, balance, currency }), 'POST /accounts');
    },
    charge: (key) => bank.json('GET', `/charges/${encodeURIComponent(key)}`),
  };
}

/** The reservation service at `url`, wherever it runs. */
export function reservationsHandle(sandbox: { url: string; dbFile: string; close(): Promise<void> }): ReservationsHandle {
  const service = sandboxHandle('reservations', sandbox);
  return {
    url: service.url,
    dbFile: service.dbFile,
    close: service.close,
    setFaults: service.setFaults,
    async setStock(sku, available) {
      check(await service.json('PUT', `/inventory/${encodeURIComponent(sku)}`, { available }), `PUT /inventory/${sku}`);
    },
    async stock(sku) {
      const { body } = check(await service.json('GET', `/inventory/${encodeURIComponent(sku)}`), `GET /inventory/${sku}`);
      return { available: Number(body.available), held: Number(body.held) };
    },
    reservation: (key) => service.json('GET', `/reservations/${encodeURIComponent(key)}`),
  };
}

export async function startBank(opts: { faults?: boolean; port?: number; dbFile?: string } = {}): Promise<BankHandle> {
  return bankHandle(
    await serveSandbox('bank', (db) => buildBankApp({ db, faults: opts.faults ?? true, keyTtlMs: 7 * 86_400_000 }), opts),
  );
}

export async function startReservations(
  opts: { faults?: boolean; port?: number; dbFile?: string } = {},
): Promise<ReservationsHandle> {
  return reservationsHandle(
    await serveSandbox(
      'reservations',
      (db) => buildReservationsApp({ db, faults: opts.faults ?? true, keyTtlMs: 7 * 86_400_000, sweepIntervalMs: 200 }),
      opts,
    ),
  );
}

let runtimeQuieted = false;
function quietRuntime(): void {
  if (runtimeQuieted) return;
  runtimeQuieted = true;
  const noop = () => undefined;
  Runtime.install({
    logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) },
  });
}

export interface WorkerHandle {
  worker: Worker;
  taskQueue: string;
  stop(): Promise<void>;
}

export async function startWorker(opts: {
  taskQueue: string;
  bankUrl: string;
  reservationsUrl?: string;
  /** Completion webhooks: each tenant's URL and the signing secret. */
  webhooks?: WorkerWebhooks;
}): Promise<WorkerHandle> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue: opts.taskQueue,
    bankUrl: opts.bankUrl,
    reservationsUrl: opts.reservationsUrl ?? 'http://127.0.0.1:9',
    downstreamTimeoutMs: 2_000,
    ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const running = worker.run();
  return {
    worker,
    taskQueue: opts.taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

export async function temporalClient(): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  return { client: new Client({ connection, namespace: 'default' }), close: () => connection.close() };
}
