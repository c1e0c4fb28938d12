// The delivery activity signs each tenant's events with that tenant's own secrets, all of
// them while it rotates, and posts them only to that tenant's URL: a receiver verifies with
// its own secret (old or new), and a secret of another tenant verifies nothing. A receiver
// that answers with a redirect is not followed: the event goes nowhere else, and the
// attempt fails to be retried.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookActivities } from '../../activities/webhooks.js';
import { completionEventId, operationRef } from '../../workflows/identity.js';
import { listenOnFreePort } from '../support/loopback.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const [ACME_OLD, ACME_NEW, UMBRELLA] = [secret(), secret(), secret()];
const RUN_ID = '0195d2f0-1c2e-7000-8000-00000000abcd';

interface Received {
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on loopback recording every POST; `answer` decides the status and headers. */
function receiver(answer: () => { status: number; headers?: Record<string, string> }) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url, headers: req.headers, body });
      const { status, headers } = answer();
      res.writeHead(status, headers).end();
    });
  });
  return { server, received };
}

const hooks = receiver(() => ({ status: 204 }));
const elsewhere = receiver(() => ({ status: 204 }));
let redirectTo = '';
const redirecting = receiver(() => ({ status: 307, headers: { location: redirectTo } }));
const urls = { acme: '', umbrella: '', redirecting: '' };
let activities: ReturnType<typeof createWebhookActivities>;

beforeAll(async () => {
  urls.acme = `${await listenOnFreePort(hooks.server)}/acme`;
  urls.umbrella = urls.acme.replace(/\/acme$/, '/umbrella');
  redirectTo = `${await listenOnFreePort(elsewhere.server)}/stolen`;
  urls.redirecting = await listenOnFreePort(redirecting.server);
  activities = createWebhookActivities({
    urls: new Map([
      ['acme', urls.acme],
      ['umbrella', urls.umbrella],
      ['redirected', urls.redirecting],
    ]),
    secrets: new Map([
      ['acme', [ACME_OLD, ACME_NEW]],
      ['umbrella', [UMBRELLA]],
      ['redirected', [secret()]],
    ]),
    timeoutMs: 2_000,
  });
});
afterAll(async () => {
  for (const s of [hooks.server, elsewhere.server, redirecting.server]) await new Promise((r) => s.close(r));
});
beforeEach(() => {
  for (const r of [hooks, elsewhere, redirecting]) r.received.length = 0;
});

function deliver(tenant: string, key: string) {
  const operation = operationRef(tenant, key);
  const eventId = completionEventId(operation, RUN_ID);
  const env = new MockActivityEnvironment({ attempt: 1 });
  const body = JSON.stringify({ type: 'operation.succeeded', data: { key } });
  return { eventId, body, result: env.run(activities.deliverCompletionEvent, operation, { body }, eventId) };
}

function verifyWith(webhookSecret: string, r: Received): unknown {
  return new Webhook(webhookSecret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

describe('completion events', () => {
  it("are signed with every current secret of their tenant, and verify with either; never with another tenant's", async () => {
    const { eventId, body, result } = deliver('acme', 'order-7');
    await expect(result).resolves.toEqual({ attempts: 1 });
    expect(hooks.received).toHaveLength(1);
    const [got] = hooks.received as [Received];
    expect(got.path).toBe('/acme');
    expect(got.headers['webhook-id']).toBe(`acme/order-7/${RUN_ID}/completed`);
    expect(got.headers['webhook-id']).toBe(eventId);
    expect(got.body).toBe(body);
    // Two signatures, space-separated, one per secret.
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWith(ACME_OLD, got)).toEqual(JSON.parse(body));
    expect(verifyWith(ACME_NEW, got)).toEqual(JSON.parse(body));
    expect(() => verifyWith(UMBRELLA, got)).toThrow(/No matching signature/);
  });

  it("of another tenant are signed with that tenant's secret only: acme's secrets verify none of them", async () => {
    await expect(deliver('umbrella', 'order-7').result).resolves.toEqual({ attempts: 1 });
    const [got] = hooks.received as [Received];
    expect(got.path).toBe('/umbrella');
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWith(UMBRELLA, got)).toBeTruthy();
    for (const s of [ACME_OLD, ACME_NEW]) expect(() => verifyWith(s, got)).toThrow(/No matching signature/);
  });

  it('answered with a redirect: not followed, nothing reaches its target, and the attempt fails to be retried', async () => {
    const failure = await deliver('redirected', 'order-8').result.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'WebhookNotDelivered',
      nonRetryable: false,
      message: expect.stringMatching(/answered 307/),
    });
    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
  });

  it('of a tenant this worker has no secret for are not sent at all', async () => {
    const none = createWebhookActivities({ urls: new Map([['acme', urls.acme]]), secrets: new Map(), timeoutMs: 2_000 });
    const env = new MockActivityEnvironment({ attempt: 1 });
    await expect(env.run(none.deliverCompletionEvent, operationRef('acme', 'k'), { body: '{}' })).rejects.toThrow(
      /no webhook URL or signing secret for tenant acme/,
    );
    expect(hooks.received).toEqual([]);
  });
});
