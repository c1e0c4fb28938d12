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
import { NO_FAULTS, type FaultsPatch } from '../../downstream/shared/faults.js';
import { openDatabase } from '../../downstream/shared/db.js';
import type { WorkerWebhooks } from '../../worker/config.js';
import { createWorker } from '../../worker/create.js';
import { quietLogger } from '../../tools/quiet-logger.js';
import { caller } from './sandbox-harness.js';

/** Faults to turn on at a sandbox (`PUT /_faults` takes any of them). */
export type Faults = FaultsPatch;

type Json = { status: number; body: Record<string, unknown> };

interface SandboxHandle {
  url: string;
  dbFile: string;
  setFaults(faults: Faults): Promise<void>;
  /** Runs `during` with these faults on, and turns them off again after it, however it ends. */
  withFaults<T>(faults: Faults, during: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface BankHandle extends SandboxHandle {
  balance(account: string): Promise<number>;
  openAccount(id: string, balance: number, currency?: string): Promise<void>;
  /** Opens an account of its own for a test (a fresh id), and returns the id. */
  newAccount(balance: number): Promise<string>;
  charge(key: string): Promise<Json>;
  /** A charge sent straight to the bank under `key`: what a late original of a lost attempt would do. */
  postCharge(key: string, charge: { account: string; amount: number; currency: string }): Promise<Json>;
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

type Sandbox = { url: string; dbFile: string; close(): Promise<void> };

/** A sandbox's fault endpoint, and a caller for its set-up and read endpoints, spoken to over HTTP. */
function sandboxHandle(name: string, sandbox: Sandbox) {
  const call = caller(sandbox.url);
  const json = (method: string, path: string, body?: unknown, key?: string): Promise<Json> =>
    call(method, path, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) });
  const setFaults = async (faults: Faults) => {
    check(await json('PUT', '/_faults', faults), `${name}: PUT /_faults`);
  };
  const handle: SandboxHandle = {
    ...sandbox,
    setFaults,
    async withFaults(faults, during) {
      await setFaults(faults);
      try {
        return await during();
      } finally {
        const off = Object.fromEntries(Object.keys(faults).map((fault) => [fault, NO_FAULTS[fault as keyof typeof NO_FAULTS]]));
        await setFaults(off);
      }
    },
  };
  return { handle, json };
}

/** The bank at `url`, whether it runs in this process or as a process of its own. */
export function bankHandle(sandbox: Sandbox): BankHandle {
  const { handle, json } = sandboxHandle('bank', sandbox);
  const openAccount = async (id: string, balance: number, currency = 'EUR') => {
    check(await json('POST', '/accounts', { id, balance, currency }), 'POST /accounts');
  };
  return {
    ...handle,
    async balance(account) {
      return Number(
        check(await json('GET', `/accounts/${encodeURIComponent(account)}`), `GET /accounts/${account}`).body.balance,
      );
    },
    openAccount,
    async newAccount(balance) {
      const id = uniqueId('acc');
      await openAccount(id, balance);
      return id;
    },
    charge: (key) => json('GET', `/charges/${encodeURIComponent(key)}`),
    postCharge: (key, charge) => json('POST', '/charges', charge, key),
  };
}

/** The reservation service at `url`, wherever it runs. */
export function reservationsHandle(sandbox: Sandbox): ReservationsHandle {
  const { handle, json } = sandboxHandle('reservations', sandbox);
  return {
    ...handle,
    async setStock(sku, available) {
      check(await json('PUT', `/inventory/${encodeURIComponent(sku)}`, { available }), `PUT /inventory/${sku}`);
    },
    async stock(sku) {
      const { body } = check(await json('GET', `/inventory/${encodeURIComponent(sku)}`), `GET /inventory/${sku}`);
      return { available: Number(body.available), held: Number(body.held) };
    },
    reservation: (key) => json('GET', `/reservations/${encodeURIComponent(key)}`),
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
  Runtime.install({ logger: quietLogger('error') });
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
    services: new Map([
      ['bank', opts.bankUrl],
      ['reservations', opts.reservationsUrl ?? 'http://127.0.0.1:9'],
    ]),
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
