// Test parts for the client and the CLI: a TCP proxy that loses the API's answer, an
// HTTP gateway that answers 503 while the API is down, the CLI (or the demo) as a process,
// and an operation that failed.
import { createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { expect } from 'vitest';
import { OperationFailedError, type RetrySafe } from '../../client/lib/index.js';
import { listenOnFreePort } from '../support/loopback.js';
import { uniqueId, type BankHandle } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface SeenRequest {
  method: string;
  path: string;
  /** The Idempotency-Key header as sent (structured-field form: `"abc"`). */
  key: string | undefined;
}

export interface LossyProxy {
  url: string;
  requests: SeenRequest[];
  /** The next `n` requests reach the API, which handles them; their answers are lost. */
  loseNextAnswers(n: number): void;
  close(): Promise<void>;
}

function requestHead(text: string): SeenRequest | undefined {
  const line = /^(GET|POST|PUT|DELETE|PATCH|HEAD) (\S+) HTTP/.exec(text);
  if (!line) return undefined;
  const key = /\r\nidempotency-key: *([^\r\n]*)/i.exec(text)?.[1];
  return { method: line[1] as string, path: line[2] as string, key };
}

/**
 * A loopback TCP proxy in front of the API. For a request marked to lose its answer, it
 * forwards the request, lets the API answer (so the operation really started), then
 * closes the client's connection without passing the answer on: the caller sees a
 * dropped connection and cannot know what happened.
 */
export async function startLossyProxy(targetPort: number): Promise<LossyProxy> {
  let toLose = 0;
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let losing = false;
    client.on('data', (chunk: Buffer) => {
      const head = requestHead(chunk.toString('latin1'));
      if (head) {
        requests.push(head);
        if (toLose > 0) {
          toLose--;
          losing = true;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (losing) {
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => sockets.delete(upstream));
  });
  const url = await listenOnFreePort(server);
  return {
    url,
    requests,
    loseNextAnswers(n) {
      toLose = n;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Gateway {
  url: string;
  /** Every request with what the gateway answered. */
  seen: Array<{ method: string; key: string | undefined; status: number }>;
  close(): Promise<void>;
}

/**
 * A load balancer in front of the API: it forwards each request, and answers 503 with
 * `Retry-After: 1` when the API refuses the connection (stopped, restarting).
 */
export async function startGateway(targetPort: number): Promise<Gateway> {
  const seen: Gateway['seen'] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
      const headers: IncomingHttpHeaders = { ...req.headers, host: `127.0.0.1:${targetPort}` };
      const upstream = httpRequest(
        { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers },
        (answer) => {
          seen.push({ method: req.method ?? '', key, status: answer.statusCode ?? 0 });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        seen.push({ method: req.method ?? '', key, status: 503 });
        res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
        res.end(
          JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'no healthy upstream' }),
        );
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  const url = await listenOnFreePort(server);
  return {
    url,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Starts a command line of the repository (`client/cli/main.ts`, `tools/demo/main.ts`) as
 * its own process, the way a user's shell would: one node process (no tsx CLI in between),
 * so a signal sent to it reaches the command itself.
 */
export function spawnCommandLine(entry: string, args: string[], env: Record<string, string> = {}, timeoutMs = 120_000) {
  return execa(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    // No inherited RETRYSAFE_* from the developer's shell: each test says what it wants.
    env: { ...withoutRetrysafeVars(process.env), NO_COLOR: '1', ...env },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: timeoutMs,
  });
}

/** Runs a command line of the repository to completion. */
export async function runCommandLine(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<CliRun> {
  const child = await spawnCommandLine(entry, args, env, timeoutMs);
  return { exitCode: child.exitCode ?? -1, stdout: String(child.stdout), stderr: String(child.stderr) };
}

const CLI_ENTRY = 'client/cli/main.ts';

/** Starts `retrysafe <args>` as its own process. */
export const spawnCli = (args: string[], env?: Record<string, string>, timeoutMs?: number) =>
  spawnCommandLine(CLI_ENTRY, args, env, timeoutMs);

/** Runs `retrysafe <args>` to completion. */
export const runCli = (args: string[], env?: Record<string, string>, timeoutMs?: number): Promise<CliRun> =>
  runCommandLine(CLI_ENTRY, args, env, timeoutMs);

function withoutRetrysafeVars(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith('RETRYSAFE_')) out[k] = v;
  return out;
}

/** A payment from an empty account, which the bank declines: the key of an operation that failed. */
export async function failedPayment(rs: RetrySafe, bank: BankHandle, prefix: string): Promise<string> {
  const account = await bank.newAccount(0);
  const key = uniqueId(prefix);
  const create = rs.payments.create({ account, amount: 10, currency: 'EUR' }, { idempotencyKey: key });
  await expect(create).rejects.toBeInstanceOf(OperationFailedError);
  return key;
}
