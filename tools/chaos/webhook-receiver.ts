// A completion-webhook receiver on loopback, for the chaos run and the tests: real HTTP,
// every delivery recorded with its headers and its raw body, and its signature checked the
// way a receiver must (standardwebhooks' Webhook.verify over the raw body). It can be told
// to answer 500 (always, for the next few, or at random) and to go down (its port refuses
// connections) and come back up on the same port.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { Rng } from './prng.js';

export interface Delivery {
  /** `webhook-id`: the operation's completion event id (completionEventId in workflows/identity.ts). */
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Webhook.verify accepted the signature over this body (and the timestamp is within its tolerance). */
  verified: boolean;
  /** What the receiver answered. */
  status: number;
  event: { type?: string; timestamp?: string; data?: Record<string, unknown> } | undefined;
}

export interface ReceiverOptions {
  /**
   * The signing secret, or each tenant's: then a delivery is verified with the secret of the
   * tenant its webhook-id names (`<tenant>/...`), as that tenant's own receiver would.
   */
  secret: string | ReadonlyMap<string, string>;
  /** Answer 500 with this probability (from `random`), else 204. */
  failRate?: number;
  random?: () => number;
  port?: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly deliveries: Delivery[];
  /**
   * The deliveries of one webhook-id, in the order they arrived. An ID without a run
   * (`<tenant>/<key>/completed`, completionEventId of the operation alone) also names the
   * event of that operation's run, `<tenant>/<key>/<runId>/completed`, whatever its run ID.
   */
  deliveriesOf(id: string): Delivery[];
  /** The next answers, in order (then back to the default). */
  answerNext(...statuses: number[]): void;
  setFailRate(rate: number): void;
  /** Stops listening: connections are refused until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  readonly isUp: boolean;
  close(): Promise<void>;
}

export async function startWebhookReceiver(opts: ReceiverOptions): Promise<WebhookReceiver> {
  const verifiers =
    typeof opts.secret === 'string'
      ? undefined
      : new Map([...opts.secret].map(([tenant, secret]) => [tenant, new Webhook(secret)]));
  const single = typeof opts.secret === 'string' ? new Webhook(opts.secret) : undefined;
  const verifierOf = (id: string) => single ?? verifiers?.get(id.slice(0, id.indexOf('/')));
  const random = opts.random ?? Math.random;
  let failRate = opts.failRate ?? 0;
  const scripted: number[] = [];
  const deliveries: Delivery[] = [];

  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let verified = false;
      let event: Delivery['event'];
      try {
        const verifier = verifierOf(headers['webhook-id']);
        if (!verifier) throw new Error('no secret for this tenant');
        event = verifier.verify(body, headers) as Delivery['event'];
        verified = true;
      } catch {
        try {
          event = JSON.parse(body) as Delivery['event'];
        } catch {
          event = undefined;
        }
      }
      const status = scripted.shift() ?? (random() < failRate ? 500 : 204);
      deliveries.push({
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        verified,
        status,
        event,
      });
      res.writeHead(status).end();
    });
  };

  let server: Server | undefined;
  let port = opts.port ?? 0;
  const listen = async () => {
    const s = createServer(handler);
    // Keep-alive would let a "down" receiver still answer on an open connection.
    s.keepAliveTimeout = 1;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();

  return {
    get url() {
      return `http://127.0.0.1:${port}/hooks/retrysafe`;
    },
    deliveries,
    deliveriesOf: (id) => deliveries.filter((d) => d.id === id || isRunOf(d.id, id)),
    answerNext: (...statuses) => void scripted.push(...statuses),
    setFailRate: (rate) => void (failRate = rate),
    down: stop,
    up: async () => {
      if (!server) await listen();
    },
    get isUp() {
      return server !== undefined;
    },
    close: stop,
  };
}

const COMPLETED = '/completed';

/** Whether `id` is `<operation>/<runId>/completed` for the `<operation>/completed` given (a run ID holds no `/`). */
function isRunOf(id: string, withoutRun: string): boolean {
  if (!withoutRun.endsWith(COMPLETED) || !id.endsWith(COMPLETED)) return false;
  const operation = `${withoutRun.slice(0, -COMPLETED.length)}/`;
  if (!id.startsWith(operation)) return false;
  const runId = id.slice(operation.length, -COMPLETED.length);
  return runId !== '' && !runId.includes('/');
}

/** A fresh signing secret in the Standard Webhooks format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * While `on()` holds, the receiver refuses a share of POSTs with 500 and now and then goes
 * down for a few seconds (connections refused); then it stays up and answers 204. Seeded,
 * so a replay of the run flaps the same way. Resolves to the number of down windows.
 */
export async function flakyWhile(receiver: WebhookReceiver, rng: Rng, on: () => boolean): Promise<number> {
  let downWindows = 0;
  receiver.setFailRate(0.3);
  while (on()) {
    await sleep(rng.int(3_000, 12_000));
    if (!on() || !rng.chance(0.5)) continue;
    downWindows++;
    await receiver.down();
    await sleep(rng.int(1_000, 6_000));
    await receiver.up();
  }
  receiver.setFailRate(0);
  await receiver.up();
  return downWindows;
}

/** Waits until every one of `ids` was answered 2xx once, or `timeoutMs` passed; returns those still missing. */
export async function awaitDelivered(receiver: WebhookReceiver, ids: string[], timeoutMs: number): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  const delivered = (id: string) => receiver.deliveriesOf(id).some((d) => d.status >= 200 && d.status < 300);
  for (;;) {
    const missing = ids.filter((id) => !delivered(id));
    if (missing.length === 0 || Date.now() > until) return missing;
    await sleep(500);
  }
}
