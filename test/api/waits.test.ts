// retrysafe_waits_timed_out_total counts the POSTs that waited for an outcome in vain: a
// POST that asked not to wait (respond-async, wait=0) answers 202 without having waited.
// The API's task queue has no worker here, so every operation stays processing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHandle } from '../support/api.js';
import { sample } from '../support/metrics.js';

let api: ApiHandle;
beforeAll(async () => {
  api = await startApi({ taskQueue: `nobody-${randomUUID()}` });
});
afterAll(async () => {
  await api?.close();
});

const timedOut = async () => sample(await api.registry.metrics(), 'retrysafe_waits_timed_out_total');
const pay = (key: string, prefer: string) =>
  api.request('POST', '/v1/payments', {
    headers: { 'idempotency-key': key, prefer },
    body: { account: 'acc_alice', amount: 100, currency: 'EUR' },
  });

describe('retrysafe_waits_timed_out_total', () => {
  it('does not count a POST that asked not to wait', async () => {
    const key = `async-${randomUUID()}`;
    const before = await timedOut();
    for (const prefer of ['respond-async', 'wait=0', 'respond-async']) expect((await pay(key, prefer)).status).toBe(202);
    expect(await timedOut()).toBe(before);
  });

  it('counts each POST that waited and found the operation still running', async () => {
    const key = `waited-${randomUUID()}`;
    const before = await timedOut();
    const first = await pay(key, 'wait=1');
    expect(first.status).toBe(202);
    expect(await timedOut()).toBe(before + 1);
    const retry = await pay(key, 'wait=1');
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await timedOut()).toBe(before + 2);
  });
});
