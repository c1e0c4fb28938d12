// Real parts for end-to-end tests: the sandbox bank on a real SQLite file and a real
// port, a worker on the shared dev server with its own task queue, a Temporal client.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { buildApp as buildBankApp } from '../../downstream/bank/app.js';
import { openDatabase } from '../../downstream/shared/db.js';
import { createWorker } from '../../worker/create.js';

export interface Faults {
  dropResponseAfterCommit?: number;
  failBeforeCommit?: number;
  delayMs?: number;
  down?: boolean;
}

export interface BankHandle {
  url: string;
  dbFile: string;
  setFaults(faults: Faults): Promise<void>;
  balance(account: string): Promise<number>;
  openAccount(id: string, balance: number, currency?: string): Promise<void>;
  charge(key: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function startBank(opts: { faults?: boolean; port?: number; dbFile?: string } = {}): Promise<BankHandle> {
  const dbFile = opts.dbFile ?? join(mkdtempSync(join(inject('tmpRoot'), 'bank-')), 'bank.db');
  const db = openDatabase(dbFile);
  const app = buildBankApp({ db, faults: opts.faults ?? true, keyTtlMs: 7 * 86_400_000 });
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return {
    url,
    dbFile,
    async setFaults(faults) {
      const res = await json('PUT', '/_faults', faults);
      if (res.status !== 200) throw new Error(`PUT /_faults → ${res.status}`);
    },
    async balance(account) {
      const res = await json('GET', `/accounts/${encodeURIComponent(account)}`);
      if (res.status !== 200) throw new Error(`GET /accounts/${account} → ${res.status}`);
      return Number(res.body.balance);
    },
    async openAccount(id, balance, currency = 'EUR') {
      const res = await json('POST', '/accounts', { id, balance, currency });
      if (res.status !== 201 && res.status !== 200) throw new Error(`POST /accounts → ${res.status}`);
    },
    charge: (key) => json('GET', `/charges/${encodeURIComponent(key)}`),
    async close() {
      await app.close();
      db.close();
    },
  };
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

export async function startWorker(opts: { taskQueue: string; bankUrl: string; reservationsUrl?: string }): Promise<WorkerHandle> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue: opts.taskQueue,
    bankUrl: opts.bankUrl,
    reservationsUrl: opts.reservationsUrl ?? 'http://127.0.0.1:9',
    downstreamTimeoutMs: 2_000,
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
