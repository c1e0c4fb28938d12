// Operators and tenants apart, over real HTTP against the real dev server: with API keys, a
// tenant's resource, its list rows and its completion events carry no link into the
// Temporal Web UI (a console over every tenant's operations) unless the operator turns
// tenant links on; in dev mode they do. /readyz says whether the API runs in dev mode. The
// operations start on a task queue no worker polls, so each stays as the test left it.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApi, type ApiHandle } from '../support/api.js';
import { uniqueId } from '../support/stack.js';

const tenant = `sec${randomUUID().slice(0, 8)}`;
const SECRET = `sk_${tenant}_0123456789abcdef`;
const auth = { authorization: `Bearer ${SECRET}` };
const taskQueue = uniqueId('operators-unpolled');

let keyed: ApiHandle;
let linked: ApiHandle;
let dev: ApiHandle;
let connection: Connection;
let client: Client;
const started: string[] = [];

beforeAll(async () => {
  [keyed, linked, dev] = await Promise.all([
    startApi({ taskQueue, apiKeys: `${SECRET}=${tenant}` }),
    startApi({ taskQueue, apiKeys: `${SECRET}=${tenant}`, env: { RETRYSAFE_UI_LINKS: 'on' } }),
    startApi({ taskQueue }),
  ]);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: 'default' });
});

afterAll(async () => {
  for (const workflowId of started)
    await client.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
  await Promise.all([keyed?.close(), linked?.close(), dev?.close()]);
  await connection?.close();
});

/** Starts a payment that no worker runs: answered at once (respond-async) with the processing resource. */
async function start(api: ApiHandle, headers: Record<string, string>, owner: string) {
  const key = uniqueId('link');
  const res = await api.request('POST', '/v1/payments', {
    body: { account: 'acc_alice', amount: 100, currency: 'EUR' },
    headers: { ...headers, 'idempotency-key': key, prefer: 'respond-async' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  started.push(`${owner}/${key}`);
  return { key, resource: res.body };
}

/** The list rows of the tenant, once visibility shows `key`. */
async function listed(api: ApiHandle, headers: Record<string, string>, key: string) {
  for (let i = 0; i < 80; i++) {
    const res = await api.request('GET', '/v1/operations?limit=100', { headers });
    const rows = res.body.operations as Array<Record<string, unknown>>;
    const row = rows.find((r) => r.key === key);
    if (row) return row;
    await sleep(250);
  }
  throw new Error(`${key} never listed`);
}

describe('links.temporalUi', () => {
  it("is absent from a tenant's resource, its reads and its list rows by default when API keys are configured", async () => {
    const { key, resource } = await start(keyed, auth, tenant);
    expect(resource.links).toEqual({ self: `/v1/operations/${key}` });
    const read = await keyed.request('GET', `/v1/operations/${key}`, { headers: auth });
    expect(read.status).toBe(200);
    expect(read.body.links).toEqual({ self: `/v1/operations/${key}` });
    expect((await listed(keyed, auth, key)).links).toEqual({ self: `/v1/operations/${key}` });
    expect(JSON.stringify(read.body)).not.toContain(inject('temporalUiUrl') || 'http://localhost:8233');
  });

  it('is there when the operator turns tenant links on (RETRYSAFE_UI_LINKS=on), and in dev mode', async () => {
    const ui = inject('temporalUiUrl') || 'http://localhost:8233';
    const withLinks = await start(linked, auth, tenant);
    expect(withLinks.resource.links).toEqual({
      self: `/v1/operations/${withLinks.key}`,
      temporalUi: `${ui}/namespaces/default/workflows/${encodeURIComponent(`${tenant}/${withLinks.key}`)}`,
    });
    const inDev = await start(dev, {}, 'default');
    expect((inDev.resource.links as Record<string, string>).temporalUi).toBe(
      `${ui}/namespaces/default/workflows/${encodeURIComponent(`default/${inDev.key}`)}`,
    );
    expect((await listed(linked, auth, withLinks.key)).links).toHaveProperty('temporalUi');
  });
});

describe('/readyz', () => {
  it('stays 200 in dev mode and says so; with API keys it says devMode false', async () => {
    expect(await dev.request('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', devMode: true } });
    expect(await keyed.request('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', devMode: false } });
  });
});
