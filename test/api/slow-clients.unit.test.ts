// The request deadlines of the API's HTTP server, on a real port, with the client in another
// process: a request that arrived in time while the server was starved of CPU is served; a
// request that really is late is still answered 408.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { rawProblemResponse } from '../../client/api/plugins/client-errors.js';
import { guardSlowClients, NODE_TIMEOUTS_OFF } from '../../client/api/plugins/slow-clients.js';
import { problems } from '../../client/api/problems.js';

const LIMITS = { headersTimeoutMs: 300, requestTimeoutMs: 500 };

/** Sends `parts` on one connection, each after the delay before it, and prints the status line. */
const CLIENT = `
const net = require('node:net');
const [port, ...steps] = process.argv.slice(1);
const socket = net.connect(Number(port), '127.0.0.1', async () => {
  for (const step of steps) {
    const [delay, text] = JSON.parse(step);
    await new Promise((r) => setTimeout(r, delay));
    socket.write(text);
  }
});
let answer = '';
socket.on('data', (d) => { answer += d; });
socket.on('close', () => { process.stdout.write(answer.split('\\r\\n')[0] || 'no answer'); process.exit(0); });
socket.on('error', () => {});
setTimeout(() => socket.destroy(), 5000);
`;

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

/** A server with the API's limits that blocks its event loop for `starveMs` on each new connection. */
async function start(starveMs: number): Promise<number> {
  server = createServer({ ...NODE_TIMEOUTS_OFF.http }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { connection: 'close' }).end('ok'));
  });
  guardSlowClients(server, LIMITS, 1_000);
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.write(rawProblemResponse(problems.requestTimeout()));
    socket.destroy();
  });
  server.on('connection', () => {
    const until = Date.now() + starveMs;
    while (Date.now() < until); // the process gets no CPU meanwhile, as under heavy load
  });
  await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
  return (server.address() as AddressInfo).port;
}

async function statusLine(port: number, ...steps: Array<[number, string]>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '-e',
    CLIENT,
    String(port),
    ...steps.map((s) => JSON.stringify(s)),
  ]);
  return stdout;
}

const REQUEST = 'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';

describe('request deadlines', () => {
  it('serves a request that arrived in time while the server was starved past both limits', async () => {
    const port = await start(4 * LIMITS.requestTimeoutMs);
    expect(await statusLine(port, [0, REQUEST])).toBe('HTTP/1.1 200 OK');
  });

  it('still answers 408 to headers that really arrive late', async () => {
    const port = await start(0);
    expect(await statusLine(port, [0, 'POST /v1/payments HTTP/1.1\r\n'], [3 * LIMITS.headersTimeoutMs, 'Host: x\r\n\r\n'])).toBe(
      'HTTP/1.1 408 Request Timeout',
    );
  });

  it('still answers 408 to a body that really arrives late', async () => {
    const port = await start(0);
    const head = REQUEST.slice(0, -2);
    expect(await statusLine(port, [0, head], [3 * LIMITS.requestTimeoutMs, '{}'])).toBe('HTTP/1.1 408 Request Timeout');
  });
});
