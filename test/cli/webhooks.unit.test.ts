// `retrysafe webhooks listen` as a process: events signed with the standardwebhooks library
// (as the worker signs them) are posted to it over loopback; what it answers and prints is
// checked, and Ctrl-C ends it with 0. It verifies with its tenant's own secret: an event
// another tenant signed with its secret (a forgery) is refused, and during a rotation an
// event signed with the old and the new secret verifies with either.
import { createServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { Operation, WebhookEvent } from '../../client/lib/index.js';
import { spawnCli } from '../client/helpers.js';
import { operation } from '../client/scripted-api.js';
import { listenOnFreePort, portOf } from '../support/loopback.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

/** The CLI listening on a free port; resolves once it printed where. */
async function listener(args: string[], env: Record<string, string> = {}) {
  const child = spawnCli(['webhooks', 'listen', '--port', '0', ...args], env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const until = (what: () => boolean, label: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (what()) {
          clearInterval(timer);
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`the listener exited (${child.exitCode}) before ${label}:\n${stdout}\n${stderr}`));
        }
      }, 20);
    });
  await until(() => /on (http:\S+)/.test(stderr), 'listening');
  const url = /on (http:\S+)/.exec(stderr)?.[1] as string;
  return {
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    /** Waits for the n-th line on stdout (output is written before the answer, but travels by pipe). */
    lines: async (n: number) => {
      await until(() => stdout.split('\n').length > n, `${n} lines on stdout`);
      return stdout.trimEnd().split('\n');
    },
    stop: async () => {
      child.kill('SIGINT');
      return child;
    },
  };
}

function event(op: Operation): WebhookEvent {
  return {
    type: op.status === 'succeeded' ? 'operation.succeeded' : 'operation.failed',
    timestamp: op.completedAt ?? '',
    data: op,
  };
}

/** Posts `body` signed as the API signs: id, timestamp and signature headers. */
async function post(
  url: string,
  body: string,
  opts: {
    id: string;
    /** Each secret signs; the signatures go space-separated, as the worker sends them during a rotation. */
    secret?: string | string[];
    at?: Date;
    tamper?: (body: string) => string;
    headers?: Record<string, string>;
  },
) {
  const at = opts.at ?? new Date();
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : (opts.secret ?? [SECRET]);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': opts.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(opts.id, at, body)).join(' '),
    ...opts.headers,
  };
  const res = await fetch(url, { method: 'POST', headers, body: opts.tamper ? opts.tamper(body) : body });
  return { status: res.status, text: await res.text() };
}

const succeeded = operation('order-1', 'succeeded');
const declined = operation('order-2', 'failed', {
  error: { code: 'insufficient_funds', message: 'declined', compensations: ['release_reservation'] },
});

describe('retrysafe webhooks listen', () => {
  it('answers 204 to genuine events and prints each; 400 to a wrong secret, an altered body, an old timestamp, missing headers', async () => {
    const l = await listener(['--secret', SECRET]);
    expect(l.stderr()).toContain("(signatures checked with your tenant's secret)");
    expect(l.stderr()).toContain(`RETRYSAFE_WEBHOOKS='<tenant>=${l.url}'`);

    const first = JSON.stringify(event(succeeded));
    expect(await post(l.url, first, { id: 'default/order-1/completed' })).toEqual({ status: 204, text: '' });
    // At least once: the same id again is a redelivery.
    expect((await post(l.url, first, { id: 'default/order-1/completed' })).status).toBe(204);
    expect(
      (await post(`${l.url}hooks/retrysafe`, JSON.stringify(event(declined)), { id: 'default/order-2/completed' })).status,
    ).toBe(204);
    expect(await l.lines(3)).toEqual([
      '2030-01-01T00:00:01.000Z  operation.succeeded  order-1  chargeId=ch_1  (webhook-id default/order-1/completed)',
      '2030-01-01T00:00:01.000Z  operation.succeeded  order-1  chargeId=ch_1  (webhook-id default/order-1/completed, redelivered)',
      '2030-01-01T00:00:01.000Z  operation.failed  order-2  insufficient_funds; compensations: release_reservation  (webhook-id default/order-2/completed)',
    ]);

    const refused = [
      await post(l.url, first, { id: 'x/wrong-secret', secret: OTHER_SECRET }),
      await post(l.url, first, { id: 'x/altered', tamper: (b) => b.replace('ch_1', 'ch_2') }),
      await post(l.url, first, { id: 'x/old', at: new Date(Date.now() - 10 * 60_000) }),
      await post(l.url, first, { id: 'x/unsigned', headers: { 'webhook-signature': '' } }),
    ];
    expect(refused).toEqual([
      { status: 400, text: 'no matching signature found\n' },
      { status: 400, text: 'no matching signature found\n' },
      { status: 400, text: 'message timestamp too old\n' },
      { status: 400, text: 'missing required headers\n' },
    ]);
    const get = await fetch(l.url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');

    const done = await l.stop();
    expect(done.exitCode).toBe(0);
    expect(l.stdout().trimEnd().split('\n')).toHaveLength(3);
    const rejections = l
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('rejected'));
    expect(rejections).toEqual([
      'rejected (400): no matching signature found (webhook-id x/wrong-secret)',
      'rejected (400): no matching signature found (webhook-id x/altered)',
      'rejected (400): message timestamp too old (webhook-id x/old)',
      'rejected (400): missing required headers (webhook-id x/unsigned)',
      'rejected (405): GET is not a webhook (webhook-id (none))',
    ]);
  });

  it('takes the secret from RETRYSAFE_TENANT_WEBHOOK_SECRET, and --json prints one JSON line per event', async () => {
    const l = await listener(['--json'], { RETRYSAFE_TENANT_WEBHOOK_SECRET: SECRET });
    const body = event(declined);
    expect((await post(l.url, JSON.stringify(body), { id: 'acme/order-2/completed' })).status).toBe(204);
    expect((await post(l.url, JSON.stringify(body), { id: 'acme/order-2/completed', secret: OTHER_SECRET })).status).toBe(400);
    const [line] = await l.lines(1);
    expect(JSON.parse(line ?? '')).toEqual({
      webhookId: 'acme/order-2/completed',
      verified: true,
      redelivery: false,
      event: body,
    });
    expect((await l.stop()).exitCode).toBe(0);
    expect(l.stdout().trimEnd().split('\n')).toHaveLength(1);
  });

  it('without a secret, says signatures are not checked and marks each event so', async () => {
    const l = await listener([]);
    expect(l.stderr()).toContain('signatures NOT checked: pass --secret or set RETRYSAFE_TENANT_WEBHOOK_SECRET');
    const res = await fetch(l.url, {
      method: 'POST',
      headers: { 'webhook-id': 'default/order-1/completed' },
      body: JSON.stringify(event(succeeded)),
    });
    expect(res.status).toBe(204);
    const notJson = await fetch(l.url, { method: 'POST', headers: { 'webhook-id': 'x' }, body: 'hello' });
    expect(notJson.status).toBe(400);
    expect(await l.lines(1)).toEqual([
      '2030-01-01T00:00:01.000Z  operation.succeeded  order-1  chargeId=ch_1  (webhook-id default/order-1/completed, signature not checked)',
    ]);
    expect((await l.stop()).exitCode).toBe(0);
    expect(l.stderr()).toContain('rejected (400): the body is not JSON (webhook-id x)');
  });

  it("refuses an event another tenant signed with its own secret: it cannot forge this tenant's events", async () => {
    // acme's receiver holds acme's secret; umbrella holds only its own (OTHER_SECRET) and
    // signs a fake "succeeded" for one of acme's keys.
    const l = await listener(['--secret', SECRET]);
    const forged = JSON.stringify(event(succeeded));
    const id = 'acme/order-1/0195d2f0-0000-7000-8000-000000000001/completed';
    expect(await post(l.url, forged, { id, secret: OTHER_SECRET })).toEqual({
      status: 400,
      text: 'no matching signature found\n',
    });
    // Nor with several signatures, all made with secrets that are not acme's.
    expect((await post(l.url, forged, { id, secret: [OTHER_SECRET, OTHER_SECRET] })).status).toBe(400);
    expect(await post(l.url, forged, { id, secret: SECRET })).toEqual({ status: 204, text: '' });
    await l.stop();
    expect(l.stdout().trimEnd().split('\n')).toHaveLength(1);
  });

  it('during a rotation, an event signed with the old and the new secret verifies with either', async () => {
    const [old, next] = [SECRET, `whsec_${Buffer.alloc(32, 3).toString('base64')}`];
    const body = JSON.stringify(event(succeeded));
    for (const secret of [old, next]) {
      const l = await listener(['--secret', secret]);
      expect((await post(l.url, body, { id: 'acme/order-1/r1/completed', secret: [old, next] })).status).toBe(204);
      // A receiver holding a third secret verifies neither signature.
      expect((await post(l.url, body, { id: 'acme/order-1/r1/completed', secret: [OTHER_SECRET] })).status).toBe(400);
      await l.stop();
    }
    const third = await listener(['--secret', OTHER_SECRET]);
    expect((await post(third.url, body, { id: 'acme/order-1/r1/completed', secret: [old, next] })).status).toBe(400);
    await third.stop();
  });

  it('on a port already taken, says so and exits 4', async () => {
    const taken = createServer();
    const port = portOf(await listenOnFreePort(taken));
    try {
      const run = await spawnCli(['webhooks', 'listen', '--port', String(port), '--secret', SECRET]);
      expect(run.exitCode).toBe(4);
      expect(String(run.stderr)).toBe(`error: port ${port} is already in use; choose another with --port`);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
