// A completion-webhook receiver on loopback, for the chaos run and the tests: real HTTP,
// every delivery recorded with its headers and its raw body, and its signature checked the
// way a receiver must (standardwebhooks' Webhook.verify over the raw body). It can be told
// to answer 500 (always, for the next few, or at random) and to go down (its port refuses
// connections) and come back up on the same port.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

/** The verifier of each event: the one secret, or its tenant's (the webhook-id starts with the tenant). */
function verifiers(secret: ReceiverOptions['secret']): (id: string) => Webhook | undefined {
  if (typeof secret === 'string') {
    const single = new Webhook(secret);
    return () => single;
  }
  const byTenant = new Map([...secret].map(([tenant, s]) => [tenant, new Webhook(s)]));
  return (id) => byTenant.get(id.slice(0, id.indexOf('/')));
}

/** Records each POST (its headers, raw body and whether its signature verifies) and answers with `answer()`. */
function recorder(verifierOf: (id: string) => Webhook | undefined, answer: () => number, deliveries: Delivery[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) =>
        String(req.headers[h] ?? ''),
      );
      let [verified, event] = [false, undefined as Delivery['event']];
      try {
        const verifier = verifierOf(id!);
        if (!verifier) throw new Error('no secret for this tenant');
        event = verifier.verify(body, {
          'webhook-id': id!,
          'webhook-timestamp': timestamp!,
          'webhook-signature': signature!,
        }) as Delivery['event'];
        verified = true;
      } catch {
        try {
          event = JSON.parse(body) as Delivery['event'];
        } catch {
          event = undefined;
        }
      }
      const status = answer();
      deliveries.push({ id: id!, timestamp: timestamp!, signature: signature!, body, verified, status, event });
      res.writeHead(status).end();
    });
  };
}

export async function startWebhookReceiver(opts: ReceiverOptions): Promise<WebhookReceiver> {
  const random = opts.random ?? Math.random;
  let failRate = opts.failRate ?? 0;
  const scripted: number[] = [];
  const deliveries: Delivery[] = [];
  const handler = recorder(verifiers(opts.secret), () => scripted.shift() ?? (random() < failRate ? 500 : 204), deliveries);

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
