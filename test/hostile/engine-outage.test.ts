// While Temporal is down the API answers 503 engine_unavailable with Retry-After on POST,
// GET and list (never a 500), /readyz says 503 and /healthz 200; and nothing accepted is
// lost: after the engine comes back, the same key completes normally, charged once.
// First against an address where nothing listens, then against a dev server of this
// test's own (its own SQLite file and port) that is stopped and started again.
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import fc from 'fast-check';
import { makeTelemetryFilterString, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startDevServer, type DevServer } from '../../tools/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../../common/namespace-setup.js';
import { createWorker } from '../../worker/create.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { startBank, uniqueId, type BankHandle } from '../support/stack.js';
import {
  Contract,
  counter,
  documentedRoute,
  problemViolations,
  rawRequest,
  startTestApi,
  type RawAnswer,
  type TestApi,
} from './support.js';

const SECRET = `sk_${uniqueId('outage')}_0123456789`;
const TENANT = uniqueId('outage');
const auth: [string, string] = ['Authorization', `Bearer ${SECRET}`];
const ENGINE_TIMEOUT_MS = 3_000;
const apiEnv = (taskQueue: string) => ({
  RETRYSAFE_TASK_QUEUE: taskQueue,
  RETRYSAFE_API_KEYS: `${SECRET}=${TENANT}`,
  RETRYSAFE_ENGINE_TIMEOUT: String(ENGINE_TIMEOUT_MS),
});

let contract: Contract;
let lastUnavailableAt = 0;

async function call(api: TestApi, method: string, path: string, body?: unknown, key?: string): Promise<RawAnswer> {
  const result = await rawRequest(api.port, {
    method,
    path,
    headers: [
      auth,
      ...(body === undefined ? [] : [['Content-Type', 'application/json'] as [string, string]]),
      ...(key === undefined ? [] : [['Idempotency-Key', key] as [string, string], ['Prefer', 'wait=20'] as [string, string]]),
    ],
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (result.closed) throw new Error(`${method} ${path}: closed without an answer`);
  const route = documentedRoute(path, method);
  if (route) expect(contract.violations(method, route, result), `${method} ${path}`).toEqual([]);
  return result;
}

function expectUnavailable(answer: RawAnswer): void {
  lastUnavailableAt = Date.now();
  expect(answer.status, answer.body).toBe(503);
  expect(answer.json?.code).toBe('engine_unavailable');
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  expect(problemViolations(answer)).toEqual([]);
}

const payment = (account: string, amount: number) => ({ account, amount, currency: 'EUR' });
const checkout = { account: 'acc_alice', amount: 10, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 1 }] };

// The SDK's gRPC retry interceptor keeps retrying a call the API gave up on (until the
// call's deadline, plus one back-off of at most 5 s), and a retry that fires after its
// connection was closed throws. So an API is closed only once its last failed call is
// that far behind it; the dead-address one lives until the end of the file.
const RETRIES_SETTLED_MS = ENGINE_TIMEOUT_MS + 5_000 * 1.2 + 500;
let deadApi: TestApi;
beforeAll(async () => {
  deadApi = await startTestApi({ env: apiEnv(uniqueId('dead')), temporalAddress: `127.0.0.1:${await freePort()}`, lazy: true });
  contract = await Contract.load(deadApi.url, `Bearer ${SECRET}`);
});
const closeLater: TestApi[] = [];
afterAll(async () => {
  await new Promise((r) => setTimeout(r, Math.max(0, lastUnavailableAt + RETRIES_SETTLED_MS - Date.now())));
  await Promise.all([deadApi?.close(), ...closeLater.map((a) => a.close())]);
});

describe('with Temporal at an address where nothing listens', () => {
  let api: TestApi;
  beforeAll(() => {
    api = deadApi;
  });

  it('answers POST, GET and list with 503 engine_unavailable and Retry-After, never 500', async () => {
    const key = uniqueId('k');
    const answers = await Promise.all([
      call(api, 'POST', '/v1/payments', payment('acc_alice', 5), key),
      call(api, 'POST', '/v1/payments', payment('acc_alice', 5), key),
      call(api, 'POST', '/v1/checkouts', checkout, uniqueId('k')),
      call(api, 'GET', `/v1/operations/${key}`),
      call(api, 'GET', '/v1/operations?status=processing'),
      call(api, 'GET', '/readyz'),
    ]);
    for (const answer of answers) expectUnavailable(answer);
    expect((await call(api, 'GET', '/healthz')).status).toBe(200);
    expect(await counter(api.registry, 'retrysafe_operations_started_total')).toBe(0);
  });

  it('answers any request, valid or not, with a documented 4xx or 503 engine_unavailable, never another 5xx', async () => {
    // Its own API with the shortest engine deadline, so that a hundred valid requests stay cheap.
    const quick = await startTestApi({
      env: { ...apiEnv(uniqueId('dead')), RETRYSAFE_ENGINE_TIMEOUT: '100' },
      temporalAddress: `127.0.0.1:${await freePort()}`,
      lazy: true,
    });
    const statuses: Record<number, number> = {};
    try {
      const body = fc.oneof(
        fc.constant<unknown>(payment('acc_alice', 5)),
        fc.constant<unknown>(checkout),
        fc.record({
          account: fc.string(),
          amount: fc.oneof(fc.integer(), fc.string()),
          currency: fc.constantFrom('EUR', 'eur', 'XXQ'),
        }),
        fc.jsonValue({ maxDepth: 2 }),
      );
      const request = fc.oneof(
        fc
          .tuple(
            fc.constantFrom('/v1/payments', '/v1/checkouts'),
            body,
            fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
          )
          .map(([path, b, key]) => ({ method: 'POST', path, body: b, key })),
        fc
          .string({ maxLength: 20 })
          .map((key) => ({ method: 'GET', path: `/v1/operations/${encodeURIComponent(key)}`, body: undefined, key: undefined })),
        fc
          .constantFrom('', '?status=failed', '?limit=0', '?type=checkout&limit=5', '?cursor=abc')
          .map((q) => ({ method: 'GET', path: `/v1/operations${q}`, body: undefined, key: undefined })),
        fc.constant({ method: 'GET', path: '/readyz', body: undefined, key: undefined }),
      );
      await fc.assert(
        fc.asyncProperty(request, async ({ method, path, body: b, key }) => {
          const answer = await call(quick, method, path, b, key);
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          if (answer.status >= 500) expectUnavailable(answer);
          else expect(answer.status).toBeGreaterThanOrEqual(400);
        }),
        { seed: 20_260_501, numRuns: 100 },
      );
      console.log(`engine unreachable: 100 requests ${JSON.stringify(statuses)}`);
      expect(statuses[503]).toBeGreaterThan(10);
      expect(await counter(quick.registry, 'retrysafe_operations_started_total')).toBe(0);
    } finally {
      // Its calls' retries end within the same wait as the other dead API's (end of file).
      lastUnavailableAt = Date.now();
      closeLater.push(quick);
    }
  });

  it('still refuses invalid requests with their own 4xx, before trying the engine', async () => {
    expect((await call(api, 'POST', '/v1/payments', { amount: 'x' }, uniqueId('k'))).status).toBe(400);
    expect((await call(api, 'POST', '/v1/payments', payment('a', 1))).json?.code).toBe('idempotency_key_missing');
    expect((await call(api, 'GET', '/v1/operations?limit=0')).status).toBe(400);
  });
});

describe('with a dev server that stops and starts again', () => {
  let server: DevServer | undefined;
  let address: string;
  let dbFile: string;
  let port: number;
  let bank: BankHandle;
  let api: TestApi;
  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  const taskQueue = uniqueId('outage');
  const account = uniqueId('acc');

  const startServer = async () => {
    server = await startDevServer({ bin: inject('temporalCli'), dbFile, port, headless: true, logLevel: 'error' });
  };

  beforeAll(async () => {
    // The worker's retries while the engine is down are expected: keep them out of the output.
    const quiet = () => undefined;
    Runtime.install({
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m) => console.error(m) },
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
    dbFile = join(mkdtempSync(join(inject('tmpRoot'), 'outage-')), 'temporal.db');
    port = await freePort();
    address = `127.0.0.1:${port}`;
    [bank] = await Promise.all([startBank({ faults: false }), startServer()]);
    const connection = await Connection.connect({ address });
    try {
      await setupNamespace(connection, 'default', { retentionMs: 24 * 3600_000 });
      await waitForSearchAttributes(connection, 'default');
    } finally {
      await connection.close();
    }
    await bank.openAccount(account, 10_000);
    workerConnection = await NativeConnection.connect({ address });
    worker = await createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      services: new Map([
        ['bank', bank.url],
        ['reservations', 'http://127.0.0.1:9'],
      ]),
      downstreamTimeoutMs: 2_000,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    workerRun = worker.run();
    api = await startTestApi({ env: apiEnv(taskQueue), temporalAddress: address, lazy: true });
    contract ??= await Contract.load(api.url, `Bearer ${SECRET}`);
  });

  afterAll(async () => {
    await new Promise((r) => setTimeout(r, Math.max(0, lastUnavailableAt + RETRIES_SETTLED_MS - Date.now())));
    await api?.close();
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await workerRun?.catch(() => undefined);
    await workerConnection?.close();
    await server?.stop();
    await bank?.close();
  });

  /** A 503 is safe to retry with the same key: what a client does while the engine is up but slow. */
  async function payUntilAnswered(key: string, amount: number): Promise<RawAnswer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await call(api, 'POST', '/v1/payments', payment(account, amount), key);
      if (answer.status !== 503 || attempt === 5) return answer;
    }
  }

  it('answers 503 during the outage, and the same key completes after it, charged once', { timeout: 120_000 }, async () => {
    const beforeKey = uniqueId('before');
    const before = await payUntilAnswered(beforeKey, 100);
    expect(before.json?.status, before.body).toBe('succeeded');

    await server!.stop();
    const key = uniqueId('during');
    const during = await Promise.all([
      call(api, 'POST', '/v1/payments', payment(account, 250), key),
      call(api, 'POST', '/v1/payments', payment(account, 250), key),
      call(api, 'GET', `/v1/operations/${key}`),
      call(api, 'GET', '/v1/operations'),
      call(api, 'GET', '/readyz'),
    ]);
    for (const answer of during) expectUnavailable(answer);
    expect((await call(api, 'GET', '/healthz')).status).toBe(200);
    // A finished operation is still answered, from the API's cache of terminal outcomes.
    const replay = await call(api, 'POST', '/v1/payments', payment(account, 100), beforeKey);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    await startServer();
    // Readiness comes back on its own once the engine answers again.
    let ready: RawAnswer | undefined;
    for (let i = 0; i < 120 && ready?.status !== 200; i++) {
      ready = await call(api, 'GET', '/readyz');
      if (ready.status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(ready?.status).toBe(200);

    const after = await payUntilAnswered(key, 250);
    expect(after.status, after.body).toBe(200);
    expect(after.json?.status).toBe('succeeded');
    // One charge for the key, and (below) one execution: the outage left nothing behind.
    expect((await bank.charge(`${TENANT}/${key}/charge`)).body).toMatchObject({ status: 'captured', amount: 250 });
    expect(await bank.balance(account)).toBe(10_000 - 100 - 250);
    // Nothing from before the outage was lost (the dev server kept its SQLite file): asked
    // of Temporal itself, since the API would answer that one from its cache.
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection, namespace: 'default' });
      expect((await client.workflow.getHandle(`${TENANT}/${beforeKey}`).describe()).status.name).toBe('COMPLETED');
      expect(Number((await client.workflow.count(`Tenant = '${TENANT}'`)).count)).toBe(2);
    } finally {
      await connection.close();
    }
    expect(worker?.getState()).toBe('RUNNING');
  });
});
