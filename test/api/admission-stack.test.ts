// Admission against real operations: a real dev server, a worker and the sandbox bank.
// What needs an operation that exists: the in-flight limit held by POSTs waiting on their
// outcome, the duplicates of one key sharing one engine wait (and refused past 64), the
// replays a limit never refuses (answered from this instance's cache) and those it may
// refuse (an operation this instance does not know), whose retry later gets the stored
// outcome.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { MAX_WAITERS_PER_KEY } from '../../client/api/admission/in-flight.js';
import { buildApp } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { startApi, type ApiAnswer, type ApiHandle } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { startWorker, uniqueId } from '../support/stack.js';

const ACME_SECRET = 'sk_acme_0123456789abcdef';
const BETA_SECRET = 'sk_beta_0123456789abcdef';
const API_KEYS = `${ACME_SECRET}=acme,${BETA_SECRET}=beta`;
const ACME = `Bearer ${ACME_SECRET}`;
const BETA = `Bearer ${BETA_SECRET}`;

const stack = useFullStack({ name: 'admission', reservations: false, faults: false, apiKeys: API_KEYS });
/** A task queue no worker polls: operations started there stay running. */
const idleQueue = uniqueId('admission-idle');
const apis: ApiHandle[] = [];
let account: string;
let limitsDb: string;

beforeAll(async () => {
  account = uniqueId('acc');
  await stack.bank.openAccount(account, 1_000_000);
  limitsDb = join(mkdtempSync(join(inject('tmpRoot'), 'admission-')), 'limits.db');
});

afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
});

async function api(taskQueue: string, env: Record<string, string>): Promise<ApiHandle> {
  const handle = await startApi({ taskQueue, apiKeys: API_KEYS, env });
  apis.push(handle);
  return handle;
}

function pay(target: ApiHandle, authorization: string, key: string, prefer = 'wait=20'): Promise<ApiAnswer> {
  return target.request('POST', '/v1/payments', {
    body: { account, amount: 100, currency: 'EUR' },
    headers: { authorization, 'idempotency-key': key, prefer },
  });
}

async function metric(target: ApiHandle, line: RegExp): Promise<string | undefined> {
  // A scrape from this machine: the metrics refuse a tenant's key.
  const res = await fetch(`${target.url}/metrics`);
  return (await res.text()).split('\n').find((l) => line.test(l));
}

describe('a tenant over its rate', () => {
  it('still gets its finished operation from the cache; one this instance does not know is refused like a new request, its retry elsewhere gets the stored outcome; another tenant is still admitted', async () => {
    const env = { RETRYSAFE_TENANT_LIMITS: 'acme=1/h', RETRYSAFE_LIMITS_DB: limitsDb };
    const [limited, peer] = [await api(stack.taskQueue, env), await api(stack.taskQueue, env)];
    const balanceBefore = await stack.bank.balance(account);

    const done = uniqueId('done');
    const first = await pay(limited, ACME, done);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ key: done, status: 'succeeded' });
    expect(first.headers.get('ratelimit')).toMatch(/^"tenant";r=0;t=\d+$/);

    // The quota is spent: a new key is refused and starts nothing.
    const refusedKey = uniqueId('refused');
    const refused = await pay(limited, ACME, refusedKey);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    await expect(stack.temporal.workflow.getHandle(`acme/${refusedKey}`).describe()).rejects.toThrow();

    // A replay answered from this instance's cache meets no limit at all.
    const cached = await pay(limited, ACME, done);
    expect(cached.status).toBe(200);
    expect(cached.headers.get('idempotent-replayed')).toBe('true');
    expect(cached.headers.get('ratelimit')).toBeNull();
    expect(cached.body).toEqual(first.body);

    // The other instance has no cache entry (as after a restart): over the shared limit, it
    // refuses the replay like a new request, without asking the engine, and starts nothing;
    // the same retry where the tenant has quota left gets the stored outcome.
    const uncached = await pay(peer, ACME, done);
    expect(uncached.status).toBe(429);
    expect(uncached.headers.get('retry-after')).toMatch(/^\d+$/);
    const later = await pay(await api(stack.taskQueue, {}), ACME, done);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body).toEqual(first.body);

    // Another tenant's quota is its own: beta is admitted while acme is refused.
    const beta = await pay(limited, BETA, uniqueId('beta'));
    expect(beta.status).toBe(200);
    expect(beta.body).toMatchObject({ status: 'succeeded' });
    expect((await pay(peer, ACME, uniqueId('refused'))).status).toBe(429);

    // One charge for acme's one admitted operation, one for beta's: nothing doubled, nothing lost.
    expect(await stack.bank.balance(account)).toBe(balanceBefore - 200);
  });
});

describe('reads of a tenant over its read limit', () => {
  it('are still answered for operations this instance has cached, and refused for the others', async () => {
    const reads = await api(stack.taskQueue, { RETRYSAFE_TENANT_READ_LIMITS: 'acme=3/m' });
    const done = uniqueId('read');
    expect((await pay(reads, ACME, done)).status).toBe(200);
    const get = (key: string) =>
      reads.request('GET', `/v1/operations/${encodeURIComponent(key)}`, { headers: { authorization: ACME } });
    // Cached: answered from memory, counted nowhere, however many.
    for (let i = 0; i < 10; i++) expect((await get(done)).status).toBe(200);
    const cancel = await reads.request('POST', `/v1/operations/${encodeURIComponent(done)}/cancel`, {
      headers: { authorization: ACME },
    });
    expect(cancel.status).toBe(409);
    // Unknown keys cost a read of Temporal each: three a minute, then 429.
    const unknown = [];
    for (let i = 0; i < 4; i++) unknown.push((await get(uniqueId('absent'))).status);
    expect(unknown).toEqual([404, 404, 404, 429]);
    expect((await get(done)).status).toBe(200);
  });
});

describe('the in-flight limit', () => {
  it('answers 503 engine_busy to a tenant at its share, lets a duplicate join, and frees places with the answers', async () => {
    // A fixed limit of two (floor = ceiling), set through the ceiling's former name.
    const bounded = await api(idleQueue, { RETRYSAFE_MAX_IN_FLIGHT: '2', RETRYSAFE_IN_FLIGHT_FLOOR: '2' });
    const [k1, k2, k3] = [uniqueId('held'), uniqueId('held'), uniqueId('new')];
    // Two POSTs wait on operations that cannot progress: two places taken for 3 s, one per tenant.
    const held = [pay(bounded, ACME, k1, 'wait=3'), pay(bounded, BETA, k2, 'wait=3')];
    await expect.poll(() => metric(bounded, /^retrysafe_operations_in_flight /)).toMatch(/ 2$/);
    expect(await metric(bounded, /^retrysafe_in_flight_limit /)).toMatch(/ 2$/);

    const busy = await pay(bounded, ACME, k3);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body).toMatchObject({ code: 'engine_busy', type: 'urn:retrysafe:problem:engine_busy' });
    await expect(stack.temporal.workflow.getHandle(`acme/${k3}`).describe()).rejects.toThrow();
    expect(await metric(bounded, /^retrysafe_admission_refused_total\{reason="engine_busy"\}/)).toMatch(/ 1$/);

    // A retry of k1 racing its first try joins it: no new place, no refusal.
    const joined = pay(bounded, ACME, k1, 'wait=1');
    for (const res of await Promise.all([...held, joined])) {
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'processing' });
    }
    expect(await metric(bounded, /^retrysafe_operations_in_flight /)).toMatch(/ 0$/);
    // The places are free again: the refused key is admitted now.
    expect((await pay(bounded, ACME, k3, 'respond-async')).status).toBe(202);
  });

  it('adapts: falls while the engine queues and rises back once it has room', async () => {
    // A queue of its own, its worker started and stopped by the test: with none, operations wait.
    const slowQueue = uniqueId('admission-slow');
    const adaptive = await api(slowQueue, { RETRYSAFE_IN_FLIGHT_FLOOR: '2', RETRYSAFE_IN_FLIGHT_CEILING: '16' });
    const gauge = async (name: string) => Number((await metric(adaptive, new RegExp(`^${name} `)))!.split(' ')[1]);
    const worker = () => startWorker({ taskQueue: slowQueue, bankUrl: stack.bank.url });
    expect(await gauge('retrysafe_in_flight_limit')).toBe(16);
    // Unloaded first: operations one at a time (their baseline).
    const first = await worker();
    for (let i = 0; i < 8; i++) expect((await pay(adaptive, BETA, uniqueId('base'))).status).toBe(200);
    await first.stop();
    // Then they queue (no worker): each wait ends first, a lower bound far above the baseline.
    const queued = await Promise.all(Array.from({ length: 16 }, () => pay(adaptive, ACME, uniqueId('queued'), 'wait=2')));
    expect(queued.every((r) => r.status === 202 || r.status === 503)).toBe(true);
    const low = await gauge('retrysafe_in_flight_limit');
    expect(low).toBeLessThan(16);
    expect(await gauge('retrysafe_engine_latency_ratio')).toBeGreaterThan(1.5);
    // Room again: a worker drains the queue and new operations take their unloaded time.
    const again = await worker();
    try {
      for (let round = 0; round < 30 && (await gauge('retrysafe_in_flight_limit')) <= low; round++) {
        await Promise.all(Array.from({ length: low }, () => pay(adaptive, BETA, uniqueId('room'))));
      }
      expect(await gauge('retrysafe_in_flight_limit')).toBeGreaterThan(low);
    } finally {
      await again.stop();
    }
  });
});

describe('duplicates of one key on one instance', () => {
  it('share one engine wait; 64 may wait at once, the next is refused 429 with Retry-After', async () => {
    // An API of the test's own, so the test can count the long polls its client makes.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection, namespace: 'default' });
    const polls = vi.spyOn(client.workflowService, 'getWorkflowExecutionHistory');
    const config = loadApiConfig({
      API_PORT: '0',
      RETRYSAFE_TASK_QUEUE: idleQueue,
      RETRYSAFE_API_KEYS: API_KEYS,
      LOG_LEVEL: 'silent',
    });
    const app = buildApp({ config, client, namespace: 'default', registry: new Registry() });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const key = uniqueId('dup');
      const send = (prefer: string) =>
        fetch(`${url}/v1/payments`, {
          method: 'POST',
          headers: { authorization: ACME, 'idempotency-key': key, prefer, 'content-type': 'application/json' },
          body: JSON.stringify({ account, amount: 100, currency: 'EUR' }),
        });
      const first = send('wait=6');
      await expect.poll(() => polls.mock.calls.length).toBeGreaterThanOrEqual(1);
      const duplicates = Array.from({ length: MAX_WAITERS_PER_KEY - 1 }, () => send('wait=5'));
      // The first and its 63 duplicates hold the key: the 65th is turned away.
      let refused: Response | undefined;
      await expect.poll(async () => (refused = await send('wait=1')).status, { timeout: 10_000, interval: 100 }).toBe(429);
      expect(refused!.headers.get('retry-after')).toBe('1');
      expect(refused!.headers.get('ratelimit-policy')).toBe('"waiters";q=64;w=1');
      expect(await refused!.json()).toMatchObject({ code: 'rate_limited' });
      const answers = await Promise.all([first, ...duplicates]);
      expect(answers.every((r) => r.status === 202)).toBe(true);
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(MAX_WAITERS_PER_KEY - 1);
      // One long poll served them all (re-issued only when the server's own poll interval ends).
      expect(polls.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      await app.close();
      await connection.close();
    }
  });
});
