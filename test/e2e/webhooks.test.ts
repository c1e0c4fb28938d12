// Completion webhooks through the real HTTP API, a real worker and a real receiver on
// loopback that verifies every signature with standardwebhooks: a receiver that answers
// 500 and then 204 gets the same event twice; one that is down past a worker restart gets
// it once it is back; a tenant without a URL gets nothing, and its operation's history
// holds nothing the feature would have added.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../../tools/chaos/webhook-receiver.js';
import { startApi, type ApiHandle } from '../support/api.js';
import { startBank, startWorker, temporalClient, uniqueId, type BankHandle, type WorkerHandle } from '../support/stack.js';
import type { WorkerWebhooks } from '../../worker/config.js';
import { acme, API_KEYS, umbrella } from './tenants.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let bank: BankHandle;
let receiver: WebhookReceiver;
let worker: WorkerHandle;
let api: ApiHandle;
let temporal: Awaited<ReturnType<typeof temporalClient>>;
let webhooks: WorkerWebhooks;
const taskQueue = uniqueId('webhooks-e2e');

beforeAll(async () => {
  bank = await startBank();
  receiver = await startWebhookReceiver({ secret: SECRET });
  webhooks = { urls: new Map([['acme', receiver.url]]), secrets: new Map([['acme', [SECRET]]]) };
  worker = await startWorker({ taskQueue, bankUrl: bank.url, webhooks });
  // A short deadline keeps the back-off between redeliveries near a second.
  api = await startApi({
    taskQueue,
    apiKeys: API_KEYS,
    env: { RETRYSAFE_WEBHOOKS: `acme=${receiver.url}`, RETRYSAFE_WEBHOOK_DEADLINE: '2m' },
  });
  temporal = await temporalClient();
});

afterAll(async () => {
  await api?.close();
  await worker?.stop();
  await temporal?.close();
  await receiver?.close();
  await bank?.close();
});

async function pay(key: string, headers: Record<string, string>) {
  const account = uniqueId('acc');
  await bank.openAccount(account, 10_000);
  return api.request('POST', '/v1/payments', {
    body: { account, amount: 1250, currency: 'EUR' },
    headers: { ...headers, 'idempotency-key': key, prefer: 'wait=20' },
  });
}

/** Polls GET until the operation's notification is no longer pending. */
async function settledNotification(key: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api.request('GET', `/v1/operations/${key}`, { headers: acme });
    const notification = body.notification as { status: string } | undefined;
    if (notification && notification.status !== 'pending') return body;
    if (Date.now() > until) throw new Error(`notification of ${key} still pending: ${JSON.stringify(body)}`);
    await sleep(250);
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** Verifies a delivery as a receiver would, independently of the receiver's own check. */
function verify(d: Delivery): unknown {
  return new Webhook(SECRET).verify(d.body, {
    'webhook-id': d.id,
    'webhook-timestamp': d.timestamp,
    'webhook-signature': d.signature,
  });
}

describe('completion webhooks', () => {
  it('answered 500 then 204: two deliveries of the same id and body, both signed, then delivered', async () => {
    const key = uniqueId('pay');
    receiver.answerNext(500);
    const answer = await pay(key, acme);
    // The operation's own answer does not wait for the webhook.
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'succeeded', notification: { status: 'pending' } });

    const final = await settledNotification(key);
    expect(final.notification).toEqual({ status: 'delivered', attempts: 2 });
    // The webhook-id names the operation's run: unique even when the key is reused after its retention.
    const { runId } = await temporal.client.workflow.getHandle(`acme/${key}`).describe();
    const id = `acme/${key}/${runId}/completed`;
    const deliveries = receiver.deliveriesOf(id);
    expect(deliveries.map((d) => d.status)).toEqual([500, 204]);
    expect(deliveries.every((d) => d.verified)).toBe(true);
    expect(deliveries[1]!.body).toBe(deliveries[0]!.body);
    const event = verify(deliveries[1]!) as { type: string; timestamp: string; data: Record<string, unknown> };
    const { notification: _n, ...resource } = final;
    expect(event).toEqual({ type: 'operation.succeeded', timestamp: final.completedAt, data: resource });
    // With API keys and tenant links left off, neither the resource nor the event points into the Web UI.
    expect(event.data.links).toEqual({ self: `/v1/operations/${key}` });
    // A forged body fails the receiver's verification.
    expect(() => verify({ ...deliveries[1]!, body: deliveries[1]!.body.replace('succeeded', 'failed') })).toThrow();
  });

  it('with the receiver down past a worker restart: delivered once it is back', async () => {
    const key = uniqueId('pay');
    const id = `acme/${key}/completed`;
    await receiver.down();
    try {
      const answer = await pay(key, acme);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: 'succeeded' });
      // At least one attempt has been refused before the worker goes away.
      await waitFor('a refused attempt', async () => {
        const { body } = await api.request('GET', `/v1/operations/${key}`, { headers: acme });
        const n = body.notification as { status: string; attempts: number };
        return n.status === 'pending' && n.attempts >= 1 ? n : undefined;
      });
      await worker.stop();
    } finally {
      await receiver.up();
    }
    expect(receiver.deliveriesOf(id)).toEqual([]);
    worker = await startWorker({ taskQueue, bankUrl: bank.url, webhooks });

    const final = await settledNotification(key);
    expect(final.notification).toMatchObject({ status: 'delivered' });
    expect((final.notification as { attempts: number }).attempts).toBeGreaterThanOrEqual(2);
    const deliveries = receiver.deliveriesOf(id);
    expect(deliveries.map((d) => d.status)).toEqual([204]);
    expect(deliveries[0]!.verified).toBe(true);
    expect(JSON.parse(deliveries[0]!.body)).toMatchObject({ type: 'operation.succeeded', data: { key, status: 'succeeded' } });
  });

  it('for a tenant without a URL: no delivery, no notification, nothing extra in the history', async () => {
    const key = uniqueId('pay');
    const answer = await pay(key, umbrella);
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('succeeded');
    expect(answer.body).not.toHaveProperty('notification');
    const read = await api.request('GET', `/v1/operations/${key}`, { headers: umbrella });
    expect(read.body).not.toHaveProperty('notification');

    const history = await temporal.client.workflow.getHandle(`umbrella/${key}`).fetchHistory();
    const types = (history.events ?? []).map((e) => String(e.eventType));
    expect(types.filter((t) => /CHILD_WORKFLOW|SIGNAL/.test(t))).toEqual([]);
    const activities = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => typeof name === 'string');
    expect(activities.filter((name) => /Completion/.test(name))).toEqual([]);
    await expect(temporal.client.workflow.getHandle(`webhook:umbrella/${key}`).describe()).rejects.toThrow();
    expect(receiver.deliveries.filter((d) => d.id.startsWith('umbrella/'))).toEqual([]);
  });
});
