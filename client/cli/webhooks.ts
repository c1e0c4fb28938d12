// `retrysafe webhooks listen`: a local endpoint for completion webhooks. Every event is
// checked with the standardwebhooks library (the spec's reference implementation: HMAC
// over "<id>.<timestamp>.<body>", constant-time compare, a 5-minute timestamp window)
// before it is printed, with the tenant's own secret: each tenant's events are signed with
// its own, so an event another tenant signed (a forgery) is refused. While a secret rotates
// the sender signs with the old and the new one, and either one verifies. A genuine event gets 204; one whose headers, timestamp or
// signature do not hold gets 400, so the sender retries and the terminal shows why.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { isOperation, type WebhookEvent } from '../lib/index.js';
import { EXIT, type ExitCode } from './exit-codes.js';

export interface ListenOptions {
  port: number;
  /** The tenant's `whsec_...`; without it events are printed unchecked. */
  secret?: string;
  /** One JSON line per event instead of one line of text. */
  json?: boolean;
}

export interface Listener {
  url: string;
  close(): Promise<void>;
}

interface Output {
  out(text: string): void;
  err(text: string): void;
}

const HOST = '127.0.0.1';
/** Events are one operation resource: far below this. */
const MAX_BODY_BYTES = 1024 * 1024;

class Rejected extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Rejected(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The event as the sender meant it: verified against the secret when there is one. */
function readEvent(body: string, headers: Record<string, string | undefined>, webhook: Webhook | undefined): unknown {
  const present = {
    'webhook-id': headers['webhook-id'] ?? '',
    'webhook-timestamp': headers['webhook-timestamp'] ?? '',
    'webhook-signature': headers['webhook-signature'] ?? '',
  };
  try {
    if (webhook) return webhook.verify(body, present);
    if (present['webhook-id'] === '') throw new Rejected(400, 'the webhook-id header is missing');
    return JSON.parse(body) as unknown;
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      throw new Rejected(400, error.message.charAt(0).toLowerCase() + error.message.slice(1));
    }
    if (error instanceof SyntaxError) throw new Rejected(400, 'the body is not JSON');
    throw error;
  }
}

const isEvent = (v: unknown): v is WebhookEvent =>
  typeof v === 'object' && v !== null && typeof (v as WebhookEvent).type === 'string' && isOperation((v as WebhookEvent).data);

/** One line for people: when, what, which operation, and how it ended. */
function describe(event: unknown, id: string, notes: string[]): string {
  const suffix = `(webhook-id ${id}${notes.map((n) => `, ${n}`).join('')})`;
  if (!isEvent(event)) return `an event that is not an operation event: ${JSON.stringify(event).slice(0, 200)}  ${suffix}`;
  const op = event.data;
  const outcome = op.error
    ? `${op.error.code}; compensations: ${op.error.compensations.length > 0 ? op.error.compensations.join(', ') : 'none'}`
    : Object.entries(op.result ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
  return `${event.timestamp}  ${event.type}  ${op.key}  ${outcome}  ${suffix}`;
}

/** Starts the endpoint; resolves once it listens. */
export async function listenForWebhooks(opts: ListenOptions, output: Output): Promise<Listener> {
  const webhook = opts.secret === undefined ? undefined : new Webhook(opts.secret);
  // Delivery is at least once: the same webhook-id again is a redelivery, not a new event.
  const seen = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = header(req, 'webhook-id') ?? '(none)';
    try {
      if (req.method !== 'POST') throw new Rejected(405, `${req.method ?? 'this method'} is not a webhook`, { allow: 'POST' });
      const body = await readBody(req);
      const event = readEvent(
        body,
        {
          'webhook-id': header(req, 'webhook-id'),
          'webhook-timestamp': header(req, 'webhook-timestamp'),
          'webhook-signature': header(req, 'webhook-signature'),
        },
        webhook,
      );
      const redelivery = seen.has(id);
      seen.add(id);
      if (opts.json) {
        output.out(`${JSON.stringify({ webhookId: id, verified: webhook !== undefined, redelivery, event })}\n`);
      } else {
        const notes = [...(redelivery ? ['redelivered'] : []), ...(webhook ? [] : ['signature not checked'])];
        output.out(`${describe(event, id, notes)}\n`);
      }
      res.writeHead(204).end();
    } catch (error) {
      const rejected = error instanceof Rejected ? error : new Rejected(500, String(error));
      output.err(`rejected (${rejected.status}): ${rejected.message} (webhook-id ${id})\n`);
      res.writeHead(rejected.status, { 'content-type': 'text/plain; charset=utf-8', ...rejected.headers });
      res.end(`${rejected.message}\n`);
      // The rest of an oversized body is not worth reading.
      if (rejected.status === 413) req.destroy();
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${HOST}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The command: listens until Ctrl-C (exit 0); a port already taken exits 4. */
export async function listen(opts: ListenOptions): Promise<ExitCode> {
  const output: Output = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
  let listener: Listener;
  try {
    listener = await listenForWebhooks(opts, output);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    output.err(
      code === 'EADDRINUSE'
        ? `error: port ${opts.port} is already in use; choose another with --port\n`
        : `error: cannot listen on ${HOST}:${opts.port}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return EXIT.error;
  }
  output.err(
    `listening for retrysafe webhooks on ${listener.url} ` +
      `(${opts.secret ? "signatures checked with your tenant's secret" : 'signatures NOT checked: pass --secret or set RETRYSAFE_TENANT_WEBHOOK_SECRET'}); Ctrl-C stops\n` +
      `send them here: RETRYSAFE_WEBHOOKS='<tenant>=${listener.url}' on the API and the worker, ` +
      `and RETRYSAFE_WEBHOOK_SECRETS='<tenant>=<the same secret>' on the worker\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await listener.close();
  return EXIT.ok;
}
