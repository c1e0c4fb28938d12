// An API instance that is closing answers a request still arriving on an open connection
// with a problem (503 shutting_down, Retry-After), never Fastify's bare JSON 503, and
// starts nothing for it.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, expect, it, vi } from 'vitest';
import { buildApp } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';

const connection = Connection.lazy({ address: '127.0.0.1:1' });
afterAll(async () => {
  // Let the SDK's pending retries of the dead address settle before closing the channel.
  await sleep(1_500);
  await connection.close().catch(() => undefined);
});

it('answers 503 shutting_down with Retry-After to a request that arrives while it closes', async () => {
  const client = new Client({ connection, namespace: 'default' });
  const startSpy = vi.spyOn(client.workflow, 'start');
  const config = loadApiConfig({ LOG_LEVEL: 'silent', API_PORT: '0', RETRYSAFE_ENGINE_TIMEOUT: '1s' });
  const app = buildApp({ config, client, namespace: 'default' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;

  // One kept-alive connection: the first request waits on the (dead) engine, so the
  // connection is busy when close() begins; the second arrives on it after that.
  const body = JSON.stringify({ account: 'acc_alice', amount: 100, currency: 'EUR' });
  const first =
    `POST /v1/payments HTTP/1.1\r\nHost: x\r\nIdempotency-Key: shutdown-1\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const second = 'GET /v1/operations/shutdown-1 HTTP/1.1\r\nHost: x\r\n\r\n';
  const socket = connect(port, '127.0.0.1');
  let raw = '';
  let sentSecond = false;
  socket.on('data', (chunk: Buffer) => {
    raw += chunk.toString();
    // The first answer is in: the connection is kept alive, and the instance is closing.
    if (!sentSecond && raw.includes('"code":"engine_unavailable"')) {
      sentSecond = true;
      socket.write(second);
    }
  });
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(first);
  await sleep(200);
  const closing = app.close();
  await ended;
  await closing;

  const answers = raw.split(/(?=HTTP\/1\.1 )/);
  expect(answers).toHaveLength(2);
  expect(answers[0]).toMatch(/^HTTP\/1\.1 503/);
  expect(answers[0]).toContain('"code":"engine_unavailable"');
  expect(answers[1]).toMatch(/^HTTP\/1\.1 503/);
  expect(answers[1]).toMatch(/content-type: application\/problem\+json/i);
  expect(answers[1]).toMatch(/retry-after: 1/i);
  expect(answers[1]).toContain('"code":"shutting_down"');
  expect(startSpy).toHaveBeenCalledTimes(1); // the first request's attempt only
});
