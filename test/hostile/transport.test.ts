// Hostile transport against a real port: oversized headers and bodies, slow clients
// (slowloris), invalid UTF-8, JSON bombs, huge arrays, many connections at once. Each
// must be answered (or the connection closed) in bounded time, and afterwards the server
// must still be alive and still run a valid payment to the end, charged once.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FIELD_ERRORS } from '../../common/http/field-errors.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import {
  Contract,
  leakIn,
  problemViolations,
  rawRequest,
  sendRaw,
  startTestApi,
  type RawAnswer,
  type RawResult,
  type TestApi,
} from './support.js';

const SECRET = `sk_${uniqueId('transport')}_0123456789`;
const TENANT = uniqueId('transport');
// Raised from 64 KiB so that 100 000-level JSON bombs and 400 000-entry arrays reach the parser.
const BODY_LIMIT = 1024 * 1024;
// Shortened for the test (the defaults are 10 s and 30 s), so slow clients meet them quickly.
const LIMITS = { headersTimeoutMs: 1_500, requestTimeoutMs: 2_500 };

// The suite builds its own API: with its HTTP limits shortened, spoken to over raw sockets.
const stack = useFullStack({ name: 'transport', reservations: false, api: 'none' });
let api: TestApi;
let contract: Contract;
const account = uniqueId('acc');
let charged = 0;

beforeAll(async () => {
  await stack.bank.openAccount(account, 1_000_000);
  api = await startTestApi({
    env: {
      RETRYSAFE_TASK_QUEUE: stack.taskQueue,
      RETRYSAFE_API_KEYS: `${SECRET}=${TENANT}`,
      RETRYSAFE_BODY_LIMIT: String(BODY_LIMIT),
    },
    httpLimits: LIMITS,
  });
  contract = await Contract.load(api.url, `Bearer ${SECRET}`);
});

afterAll(async () => {
  await api?.close();
});

const authHeader: [string, string] = ['Authorization', `Bearer ${SECRET}`];
const json: [string, string] = ['Content-Type', 'application/json'];

function answered(result: RawResult): RawAnswer {
  if (result.closed)
    throw new Error(`closed without an answer (${result.error ?? 'no error'}): ${result.received.slice(0, 200)}`);
  return result;
}

function expectProblem(result: RawResult, status: number, code: string): RawAnswer {
  const answer = answered(result);
  expect(answer.status, answer.body.slice(0, 500)).toBe(status);
  expect(answer.json?.code).toBe(code);
  expect(problemViolations(answer)).toEqual([]);
  expect(leakIn(answer.body)).toBeUndefined();
  return answer;
}

function postPayment(body: string | Buffer, extra: Array<[string, string | Buffer]> = [], key: string | Buffer = uniqueId('t')) {
  return rawRequest(api.port, {
    method: 'POST',
    path: '/v1/payments',
    headers: [authHeader, json, ['Idempotency-Key', key], ['Prefer', 'wait=20'], ...extra],
    body,
  });
}

/** The server answers /healthz and still runs a valid payment to the end, charged once. */
async function expectAlive(): Promise<void> {
  const health = answered(await rawRequest(api.port, { method: 'GET', path: '/healthz' }));
  expect(health.status).toBe(200);
  const before = await stack.bank.balance(account);
  const key = uniqueId('alive');
  const answer = answered(await postPayment(JSON.stringify({ account, amount: 7, currency: 'EUR' }), [], key));
  expect(answer.status, answer.body).toBe(200);
  expect(answer.json?.status).toBe('succeeded');
  expect(contract.violations('POST', '/v1/payments', answer)).toEqual([]);
  charged += 7;
  expect(await stack.bank.balance(account)).toBe(before - 7);
  const charge = await stack.bank.charge(`${TENANT}/${key}/charge`);
  expect(charge.body).toMatchObject({ status: 'captured', amount: 7 });
}

describe('oversized headers', () => {
  it('answers a 64 KiB header with 431 headers_too_large and keeps serving', async () => {
    const answer = expectProblem(
      await rawRequest(api.port, { method: 'GET', path: '/healthz', headers: [['X-Big', 'a'.repeat(64 * 1024)]] }),
      431,
      'headers_too_large',
    );
    expect(answer.headers.connection).toBe('close');
    await expectAlive();
  });

  it('answers 600 headers of 40 bytes (24 KiB in all) with 431 too', async () => {
    const headers = Array.from({ length: 600 }, (_, i): [string, string] => [`X-H${i}`, 'v'.repeat(32)]);
    expectProblem(await rawRequest(api.port, { method: 'GET', path: '/healthz', headers }), 431, 'headers_too_large');
    await expectAlive();
  });

  it('answers a 64 KiB Idempotency-Key and a 64 KiB Authorization the same way, before any route runs', async () => {
    expectProblem(await postPayment('{}', [], 'k'.repeat(64 * 1024)), 431, 'headers_too_large');
    expectProblem(
      await rawRequest(api.port, {
        method: 'GET',
        path: '/v1/operations',
        headers: [['Authorization', `Bearer ${'s'.repeat(64 * 1024)}`]],
      }),
      431,
      'headers_too_large',
    );
    await expectAlive();
  });
});

describe('oversized bodies', () => {
  it('answers a body over the limit with 413 payload_too_large', async () => {
    const body = JSON.stringify({ account, amount: 1, currency: 'EUR', description: 'x'.repeat(BODY_LIMIT) });
    expectProblem(await postPayment(body), 413, 'payload_too_large');
    await expectAlive();
  });

  it('answers 413 from the Content-Length alone, without waiting for a body that never comes', async () => {
    const head = `POST /v1/payments HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nIdempotency-Key: ${uniqueId('cl')}\r\nContent-Length: ${10 * BODY_LIMIT}\r\n\r\n{"a":`;
    expectProblem(await sendRaw(api.port, Buffer.from(head), 10_000), 413, 'payload_too_large');
    await expectAlive();
  });

  it('answers a chunked body that grows past the limit with 413', async () => {
    const chunk = 'x'.repeat(256 * 1024);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const head = `POST /v1/payments HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nIdempotency-Key: ${uniqueId('ch')}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    expectProblem(
      await sendRaw(api.port, Buffer.from(head + '5\r\n{"a":\r\n' + chunks + '0\r\n\r\n'), 10_000),
      413,
      'payload_too_large',
    );
    await expectAlive();
  });
});

/** Opens a connection that sends `head`, then one more byte of `trickle` every `everyMs`. */
function slowClient(head: string, trickle: string, everyMs: number, giveUpMs: number) {
  return new Promise<{ closedByServer: boolean; received: string; sent: number }>((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port: api.port });
    let received = '';
    let sent = 0;
    let gaveUp = false;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedByServer: !gaveUp, received, sent });
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.destroyed) return;
        socket.write(trickle[sent % trickle.length]!);
        sent++;
      }, everyMs);
    });
  });
}

describe('slow clients (slowloris)', () => {
  it('closes connections that trickle their headers or their body, and serves others meanwhile', async () => {
    const headers = `POST /v1/payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SECRET}\r\n`;
    const withBody = `${headers}Content-Type: application/json\r\nIdempotency-Key: ${uniqueId('slow')}\r\nContent-Length: 1000\r\n\r\n{"account":"`;
    // Three bursts, each opened in one go (as an attacker would; Node's own timeout checks
    // lose track of connections that arrive together): eight clients sending a header byte
    // every 300 ms, two sending a body byte every 300 ms, two that connect and say nothing.
    // Each would otherwise hold its connection for as long as it likes.
    for (let burst = 0; burst < 3; burst++) {
      const slow = [
        ...Array.from({ length: 8 }, () => slowClient(headers, 'X-Slow-Header: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 300, 15_000)),
        ...Array.from({ length: 2 }, () => slowClient(withBody, 'a', 300, 15_000)),
        ...Array.from({ length: 2 }, () => slowClient('', '', 60_000, 15_000)),
      ];
      // Meanwhile the server answers everyone else.
      if (burst === 0) await expectAlive();
      const results = await Promise.all(slow);
      for (const r of results) {
        expect(r.closedByServer, `still open after 15 s (${r.sent} bytes sent)`).toBe(true);
        // Closed with a 408 problem.
        expect(r.received).toMatch(/^HTTP\/1\.1 408 /);
        expect(r.received).toContain('application/problem+json');
        expect(r.received).toContain('"code":"request_timeout"');
      }
    }
    // Nothing the slow body was meant to start was started.
    await expectAlive();
  });
});

describe('a long wait is not a slow client', () => {
  it('answers a POST that waits longer than the request timeout: the wait comes after the request', async () => {
    // Every charge attempt fails for now, so the payment stays processing for the whole wait.
    await stack.bank.setFaults({ failBeforeCommit: 1 });
    const key = uniqueId('long');
    const began = Date.now();
    const answer = answered(
      await rawRequest(api.port, {
        method: 'POST',
        path: '/v1/payments',
        headers: [authHeader, json, ['Idempotency-Key', key], ['Prefer', 'wait=4']],
        body: JSON.stringify({ account, amount: 9, currency: 'EUR' }),
      }),
    );
    // Not a timing check: the server waits the full 4 s by design; this only confirms the
    // answer came after the request timeout had passed, so the test means something.
    expect(Date.now() - began).toBeGreaterThan(LIMITS.requestTimeoutMs);
    expect(answer.status, answer.body).toBe(202);
    expect(answer.json?.status).toBe('processing');
    await stack.bank.setFaults({ failBeforeCommit: 0 });
    let op: Record<string, unknown> | undefined;
    for (let i = 0; i < 120 && (op === undefined || op.status === 'processing'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 250));
      op = answered(await rawRequest(api.port, { method: 'GET', path: `/v1/operations/${key}`, headers: [authHeader] })).json;
    }
    expect(op?.status).toBe('succeeded');
    charged += 9;
    expect((await stack.bank.charge(`${TENANT}/${key}/charge`)).body).toMatchObject({ status: 'captured', amount: 9 });
    await expectAlive();
  });
});

describe('invalid UTF-8', () => {
  it('refuses a body with invalid UTF-8 inside a string with 400, and starts nothing', async () => {
    const key = uniqueId('utf8');
    for (const bad of [[0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xc0, 0xaf]]) {
      const body = Buffer.concat([Buffer.from('{"account":"'), Buffer.from(bad), Buffer.from('","amount":1,"currency":"EUR"}')]);
      const answer = expectProblem(await postPayment(body, [], key), 400, 'invalid_request');
      expect(answer.json?.errors).toEqual([{ field: 'body', message: 'is not valid UTF-8' }]);
    }
    const read = answered(await rawRequest(api.port, { method: 'GET', path: `/v1/operations/${key}`, headers: [authHeader] }));
    expect(read.status).toBe(404);
    await expectAlive();
  });

  it('refuses invalid UTF-8 in the Idempotency-Key and in the path', async () => {
    for (const bad of [
      [0xc3, 0x28],
      [0xff, 0xfe],
      [0xe2, 0x82, 0x28],
    ]) {
      const key = Buffer.concat([Buffer.from('order-'), Buffer.from(bad)]);
      expectProblem(
        await postPayment(JSON.stringify({ account, amount: 1, currency: 'EUR' }), [], key),
        400,
        'idempotency_key_invalid',
      );
      const path = Buffer.concat([Buffer.from('/v1/operations/'), Buffer.from(bad)]);
      const answer = answered(await rawRequest(api.port, { method: 'GET', path, headers: [authHeader] }));
      expect([400, 404]).toContain(answer.status);
      expect(problemViolations(answer)).toEqual([]);
    }
    expectProblem(
      await rawRequest(api.port, { method: 'GET', path: '/v1/operations/%C3%28', headers: [authHeader] }),
      400,
      'invalid_request',
    );
    await expectAlive();
  });
});

describe('JSON bombs', () => {
  it.each([
    ['100 000 nested arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['100 000 nested objects', '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)],
    [
      'nesting inside a field',
      `{"account":"a","amount":1,"currency":"EUR","description":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    ],
    [
      'nesting inside an item',
      `{"account":"a","amount":1,"currency":"EUR","items":[${'{"sku":'.repeat(50_000)}1${'}'.repeat(50_000)}]}`,
    ],
    ['an unterminated bomb', '['.repeat(200_000)],
  ])('answers %s with 400 and does not crash', async (_name, body) => {
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BODY_LIMIT);
    const answer = expectProblem(await postPayment(body), 400, 'invalid_request');
    expect(answer.body.length).toBeLessThan(8_192);
    await expectAlive();
  });
});

describe('huge arrays', () => {
  it('answers items with 400 000 entries (within the limit) with 400 naming at most a few fields', async () => {
    const body = `{"account":"a","amount":1,"currency":"EUR","items":[${Array.from({ length: 400_000 }, () => '0').join(',')}]}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BODY_LIMIT);
    const checkout = await rawRequest(api.port, {
      method: 'POST',
      path: '/v1/checkouts',
      headers: [authHeader, json, ['Idempotency-Key', uniqueId('arr')]],
      body,
    });
    const answer = expectProblem(checkout, 400, 'invalid_request');
    const errors = answer.json?.errors as unknown[];
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThanOrEqual(MAX_FIELD_ERRORS);
    expect(answer.body.length).toBeLessThan(8_192);
    await expectAlive();
  });

  it('answers items with 1 000 000 entries (over the limit) with 413', async () => {
    const body = `{"account":"a","amount":1,"currency":"EUR","items":[${Array.from({ length: 1_000_000 }, () => '{}').join(',')}]}`;
    const answer = await rawRequest(api.port, {
      method: 'POST',
      path: '/v1/checkouts',
      headers: [authHeader, json, ['Idempotency-Key', uniqueId('arr')]],
      body,
    });
    expectProblem(answer, 413, 'payload_too_large');
    await expectAlive();
  });
});

describe('many connections', () => {
  it('answers 300 concurrent connections, each with its own request, and keeps serving', async () => {
    const requests = Array.from({ length: 300 }, (_, i) => {
      switch (i % 3) {
        case 0:
          return rawRequest(api.port, { method: 'GET', path: '/healthz' }).then((r) => [r, 200] as const);
        case 1:
          return rawRequest(api.port, { method: 'GET', path: `/v1/operations/${uniqueId('none')}`, headers: [authHeader] }).then(
            (r) => [r, 404] as const,
          );
        default:
          return postPayment('{"account":1}').then((r) => [r, 400] as const);
      }
    });
    const results = await Promise.all(requests);
    for (const [result, status] of results) expect(answered(result).status).toBe(status);
    await expectAlive();
    // Only the liveness payments moved money.
    expect(await stack.bank.balance(account)).toBe(1_000_000 - charged);
  });
});
