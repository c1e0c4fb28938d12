// Admission against real operations: a real dev server, a worker and the sandbox bank.
// What needs an operation that exists: the engine bound held by POSTs waiting on their
// outcome, and the replays that a limit must never refuse (answered from the cache, or
// found in Temporal by another instance, or still running).
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApi, type ApiAnswer, type ApiHandle } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';

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
  it('still gets its finished operation from the cache, from another instance, and a running one; another tenant is still admitted', async () => {
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
    // looks the key up, finds the operation and answers it.
    const uncached = await pay(peer, ACME, done);
    expect(uncached.status).toBe(200);
    expect(uncached.headers.get('idempotent-replayed')).toBe('true');
    expect(uncached.body).toEqual(first.body);
    expect(await metric(peer, /^retrysafe_admission_bypassed_total\{reason="rate_limited"\}/)).toMatch(/ 1$/);

    // A retry of an operation still running (started elsewhere, on a queue no worker polls).
    const running = uniqueId('running');
    const unlimited = await api(idleQueue, {});
    expect((await pay(unlimited, ACME, running, 'respond-async')).status).toBe(202);
    const retry = await pay(limited, ACME, running, 'wait=0');
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ key: running, status: 'processing' });

    // Another tenant's quota is its own: beta is admitted while acme is refused.
    const beta = await pay(limited, BETA, uniqueId('beta'));
    expect(beta.status).toBe(200);
    expect(beta.body).toMatchObject({ status: 'succeeded' });
    expect((await pay(peer, ACME, uniqueId('refused'))).status).toBe(429);

    // One charge for acme's one admitted operation, one for beta's: nothing doubled, nothing lost.
    expect(await stack.bank.balance(account)).toBe(balanceBefore - 200);
  });
});

describe('the engine bound', () => {
  it('answers 503 engine_busy past RETRYSAFE_MAX_IN_FLIGHT, never to a request for an operation that exists, and frees places with the answers', async () => {
    const bounded = await api(idleQueue, { RETRYSAFE_MAX_IN_FLIGHT: '2' });
    const [k1, k2, k3] = [uniqueId('held'), uniqueId('held'), uniqueId('new')];
    // Two POSTs wait on operations that cannot progress: two places taken for 3 s.
    const held = [pay(bounded, ACME, k1, 'wait=3'), pay(bounded, BETA, k2, 'wait=3')];
    await expect.poll(() => metric(bounded, /^retrysafe_operations_in_flight /)).toMatch(/ 2$/);

    const busy = await pay(bounded, ACME, k3);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body).toMatchObject({ code: 'engine_busy', type: 'urn:retrysafe:problem:engine_busy' });
    await expect(stack.temporal.workflow.getHandle(`acme/${k3}`).describe()).rejects.toThrow();

    // A retry of k1 racing its first try joins it; one started elsewhere is found and served.
    const joined = pay(bounded, ACME, k1, 'wait=1');
    const elsewhere = uniqueId('elsewhere');
    expect((await pay(await api(idleQueue, {}), ACME, elsewhere, 'respond-async')).status).toBe(202);
    const found = await pay(bounded, ACME, elsewhere, 'wait=0');
    expect(found.status).toBe(202);
    expect(found.headers.get('idempotent-replayed')).toBe('true');
    expect(await metric(bounded, /^retrysafe_admission_bypassed_total\{reason="engine_busy"\}/)).toMatch(/ 1$/);

    for (const res of await Promise.all([...held, joined])) {
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'processing' });
    }
    expect(await metric(bounded, /^retrysafe_operations_in_flight /)).toMatch(/ 0$/);
    // The places are free again: the refused key is admitted now.
    expect((await pay(bounded, ACME, k3, 'respond-async')).status).toBe(202);
  });
});
