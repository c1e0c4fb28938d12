// The client's retry decisions, isolated: a scripted HTTP server on loopback plays the API,
// and an injected clock, sleep and random source replace time, so delays are read, not
// waited for.
import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  IdempotencyConflictError,
  OperationPendingError,
  type ClientOptions,
} from '../../client/lib/index.js';
import { listenOnFreePort } from '../support/loopback.js';
import { operation, problem, useScriptedApi } from './scripted-api.js';

const api = useScriptedApi();

/** A client on a fake clock: `sleeps` lists every delay asked for, and time jumps by it. */
function fakeTimeClient(opts: ClientOptions & { startAt?: number } = {}) {
  let clock = opts.startAt ?? 1_000_000;
  const sleeps: number[] = [];
  const client = createClient({
    baseUrl: api.url,
    now: () => clock,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      clock += ms;
    },
    random: () => 1,
    ...opts,
  });
  return { client, sleeps, advance: (ms: number) => (clock += ms) };
}

const body = { account: 'acc_alice', amount: 1250, currency: 'EUR' };
const keysSent = () => api.seen.map((s) => s.headers['idempotency-key']);

describe('backoff', () => {
  it('doubles the ceiling on each retry and stops growing at the cap, with the same key on every request', async () => {
    const key = 'order-backoff';
    api.script = [
      ...Array.from({ length: 6 }, () => problem(503, 'engine_unavailable')),
      { status: 200, body: operation(key, 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({
      retry: { baseDelayMs: 250, maxDelayMs: 4_000, maxAttempts: 10 },
      timeoutMs: 60_000,
    });
    const result = await client.payments.create(body, { idempotencyKey: key });
    expect(sleeps).toEqual([250, 500, 1_000, 2_000, 4_000, 4_000]);
    expect(result.status).toBe('succeeded');
    expect(result.meta).toEqual({ key, replayed: false, requests: 7 });
    expect(new Set(keysSent())).toEqual(new Set([`"${key}"`]));
    expect(api.seen.every((s) => s.method === 'POST' && s.body === JSON.stringify(body))).toBe(true);
  });

  it('draws each delay uniformly between zero and the ceiling (full jitter)', async () => {
    const draws = [0.5, 0.25, 0];
    api.script = [
      problem(503, 'engine_unavailable'),
      problem(503, 'engine_unavailable'),
      problem(503, 'engine_unavailable'),
      { status: 200, body: operation('k-jitter', 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({
      retry: { baseDelayMs: 1_000, maxDelayMs: 60_000 },
      random: () => draws.shift() ?? 0,
    });
    await client.payments.create(body, { idempotencyKey: 'k-jitter' });
    // ceilings 1000, 2000, 4000 times the draws
    expect(sleeps).toEqual([500, 500, 0]);
  });

  it('waits at least Retry-After seconds, even when the jitter draws less', async () => {
    api.script = [
      { ...problem(503, 'engine_unavailable'), headers: { 'retry-after': '3' } },
      { ...problem(429, 'rate_limited'), headers: { 'retry-after': '1' } },
      { status: 200, body: operation('k-ra', 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({ random: () => 0, retry: { baseDelayMs: 250 } });
    await client.payments.create(body, { idempotencyKey: 'k-ra' });
    expect(sleeps).toEqual([3_000, 1_000]);
  });

  it('keeps the backoff when it is longer than Retry-After', async () => {
    api.script = [
      { ...problem(503, 'engine_unavailable'), headers: { 'retry-after': '1' } },
      { status: 200, body: operation('k-ra2', 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({ random: () => 1, retry: { baseDelayMs: 2_500 } });
    await client.payments.create(body, { idempotencyKey: 'k-ra2' });
    expect(sleeps).toEqual([2_500]);
  });

  it('reads a Retry-After HTTP date against the injected clock', async () => {
    const startAt = Date.parse('2030-06-01T12:00:00Z');
    api.script = [
      { ...problem(503, 'engine_unavailable'), headers: { 'retry-after': new Date(startAt + 7_000).toUTCString() } },
      { status: 200, body: operation('k-date', 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({ startAt, random: () => 0 });
    await client.payments.create(body, { idempotencyKey: 'k-date' });
    expect(sleeps).toEqual([7_000]);
  });
});

describe('what is retried', () => {
  it('retries 429, 502, 504 and a reset connection, then succeeds with one key', async () => {
    api.script = [
      problem(429, 'rate_limited'),
      { status: 502, body: 'bad gateway' },
      { status: 504, body: 'gateway timeout' },
      'reset',
      { status: 200, body: operation('k-mix', 'succeeded'), headers: { 'idempotent-replayed': 'true' } },
    ];
    const retried: Array<number | null> = [];
    const { client } = fakeTimeClient({ onRetry: (e) => retried.push(e.error.status) });
    const result = await client.payments.create(body, { idempotencyKey: 'k-mix' });
    expect(retried).toEqual([429, 502, 504, null]);
    expect(result.meta).toEqual({ key: 'k-mix', replayed: true, requests: 5 });
    expect(new Set(keysSent())).toEqual(new Set(['"k-mix"']));
  });

  it.each([
    [400, 'invalid_request'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [500, 'internal_error'],
  ])('does not retry %i (%s): one request, an ApiError with the problem code and the key', async (status, code) => {
    api.script = [problem(status, code), { status: 200, body: operation('never', 'succeeded') }];
    const { client, sleeps } = fakeTimeClient();
    const error = await client.payments.create(body, { idempotencyKey: 'k-final' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, code, key: 'k-final', retryable: false });
    expect(api.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('does not retry 422: an IdempotencyConflictError naming the differing fields', async () => {
    api.script = [problem(422, 'idempotency_key_reused', { differences: ['amount', 'currency'] })];
    const { client } = fakeTimeClient();
    const error = await client.payments.create(body, { idempotencyKey: 'k-422' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyConflictError);
    expect(error).toMatchObject({ status: 422, key: 'k-422', differences: ['amount', 'currency'] });
    expect(api.seen).toHaveLength(1);
  });

  it('gives up after maxAttempts with a retryable ApiError that carries the key', async () => {
    api.script = Array.from({ length: 5 }, () => problem(503, 'engine_unavailable'));
    const { client, sleeps } = fakeTimeClient({ retry: { maxAttempts: 3 } });
    const error = await client.payments.create(body, { idempotencyKey: 'k-budget' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'engine_unavailable', key: 'k-budget', retryable: true, attempts: 3 });
    expect((error as Error).message).toContain('retrying with the same idempotency key (k-budget) is safe');
    expect(api.seen).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('gives up rather than sleep past the deadline', async () => {
    api.script = [
      { ...problem(503, 'engine_unavailable'), headers: { 'retry-after': '10' } },
      { status: 200, body: operation('x', 'succeeded') },
    ];
    const { client, sleeps } = fakeTimeClient({ timeoutMs: 5_000 });
    const error = await client.payments.create(body, { idempotencyKey: 'k-deadline' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, key: 'k-deadline', retryable: true, attempts: 1 });
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it('stops at once when the caller aborts, without another request', async () => {
    api.script = [problem(503, 'engine_unavailable'), { status: 200, body: operation('x', 'succeeded') }];
    const controller = new AbortController();
    const { client } = fakeTimeClient({
      signal: controller.signal,
      onRetry: () => controller.abort(new Error('caller gave up')),
    });
    await expect(client.payments.create(body, { idempotencyKey: 'k-abort' })).rejects.toThrow('caller gave up');
    expect(api.seen).toHaveLength(1);
  });
});

describe('keys', () => {
  it('makes one new UUID key per logical call and sends it in the structured-field form', async () => {
    api.script = [
      problem(503, 'engine_unavailable'),
      { status: 200, body: operation('a', 'succeeded') },
      { status: 200, body: operation('b', 'succeeded') },
    ];
    const { client } = fakeTimeClient();
    const first = await client.payments.create(body);
    const second = await client.payments.create(body);
    expect(first.meta.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.meta.key).not.toBe(first.meta.key);
    expect(keysSent()).toEqual([`"${first.meta.key}"`, `"${first.meta.key}"`, `"${second.meta.key}"`]);
  });

  it('escapes quotes and backslashes in a given key', async () => {
    const key = 'order-"7"\\b';
    api.script = [{ status: 200, body: operation(key, 'succeeded') }];
    const { client } = fakeTimeClient();
    await client.payments.create(body, { idempotencyKey: key });
    expect(keysSent()).toEqual(['"order-\\"7\\"\\\\b"']);
  });

  it('refuses a key the API could not accept before sending anything', async () => {
    const { client } = fakeTimeClient();
    await expect(client.payments.create(body, { idempotencyKey: 'has space' })).rejects.toMatchObject({
      code: 'idempotency_key_invalid',
      key: 'has space',
      status: null,
    });
    await expect(client.payments.create(body, { idempotencyKey: 'é' })).rejects.toBeInstanceOf(ApiError);
    expect(api.seen).toHaveLength(0);
  });

  it('does not let meta leak into the operation JSON', async () => {
    api.script = [{ status: 200, body: operation('k-json', 'succeeded') }];
    const { client } = fakeTimeClient();
    const result = await client.payments.create(body, { idempotencyKey: 'k-json' });
    expect(JSON.parse(JSON.stringify(result))).toEqual(operation('k-json', 'succeeded'));
    expect(result.meta.key).toBe('k-json');
  });
});

describe('following a 202', () => {
  it('polls Location, Retry-After apart (or the poll interval), until the operation is terminal', async () => {
    const key = 'a/b';
    api.script = [
      { status: 202, body: operation(key, 'processing'), headers: { location: '/v1/operations/a%2Fb', 'retry-after': '2' } },
      { status: 200, body: operation(key, 'processing') },
      { status: 200, body: operation(key, 'succeeded') },
    ];
    const polled: string[] = [];
    const { client, sleeps } = fakeTimeClient({ pollIntervalMs: 500, onPoll: (op) => polled.push(op.status) });
    const result = await client.payments.create(body, { idempotencyKey: key });
    expect(result.result).toEqual({ chargeId: 'ch_1' });
    expect(sleeps).toEqual([2_000, 500]);
    expect(polled).toEqual(['processing', 'processing']);
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'POST /v1/payments',
      'GET /v1/operations/a%2Fb',
      'GET /v1/operations/a%2Fb',
    ]);
    expect(result.meta.requests).toBe(3);
  });

  it('asks the server to wait less than the time left (Prefer: wait)', async () => {
    api.script = [
      { status: 200, body: operation('p1', 'succeeded') },
      { status: 200, body: operation('p2', 'succeeded') },
      { status: 200, body: operation('p3', 'succeeded') },
    ];
    const { client } = fakeTimeClient();
    await client.payments.create(body, { idempotencyKey: 'p1', timeoutMs: 60_000 });
    await client.payments.create(body, { idempotencyKey: 'p2', timeoutMs: 4_500 });
    await client.payments.create(body, { idempotencyKey: 'p3', timeoutMs: 800 });
    expect(api.seen.map((s) => s.headers.prefer)).toEqual(['wait=10', 'wait=3', 'wait=0']);
  });

  it('at the deadline raises OperationPendingError with the key and the last state seen', async () => {
    api.script = [
      {
        status: 202,
        body: operation('k-pending', 'processing'),
        headers: { location: '/v1/operations/k-pending', 'retry-after': '1' },
      },
      { status: 200, body: operation('k-pending', 'processing', { step: 'charge_payment' }) },
      { status: 200, body: operation('k-pending', 'processing') },
    ];
    const { client, sleeps } = fakeTimeClient({ timeoutMs: 2_000, pollIntervalMs: 500 });
    const error = await client.payments.create(body, { idempotencyKey: 'k-pending' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationPendingError);
    expect(error).toMatchObject({ key: 'k-pending', operation: { status: 'processing', key: 'k-pending' } });
    // 1 s (Retry-After), then 0.5 s; the next poll would reach the 2 s deadline.
    expect(sleeps).toEqual([1_000, 500]);
    expect(api.seen).toHaveLength(3);
  });

  it('a failed operation raises OperationFailedError with the business code and the compensations', async () => {
    api.script = [
      {
        status: 200,
        body: operation('k-failed', 'failed', {
          error: { code: 'insufficient_funds', message: 'declined', compensations: ['release_reservation'] },
        }),
      },
    ];
    const { client } = fakeTimeClient();
    const error = await client.payments.create(body, { idempotencyKey: 'k-failed' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'OperationFailedError',
      code: 'insufficient_funds',
      key: 'k-failed',
      compensations: ['release_reservation'],
    });
  });

  it('a 200 that is not an operation is an invalid_response, not a success', async () => {
    api.script = [{ status: 200, body: { hello: 'proxy page' } }];
    const { client } = fakeTimeClient();
    await expect(client.payments.create(body, { idempotencyKey: 'k-junk' })).rejects.toMatchObject({
      code: 'invalid_response',
      retryable: false,
    });
  });
});

describe('an API that never answers', () => {
  it('each attempt ends at requestTimeoutMs as a retryable `timeout` with no status, then the client gives up', async () => {
    const pending = new Set<ServerResponse>();
    const silent = createServer((_req, res) => void pending.add(res));
    const url = await listenOnFreePort(silent);
    try {
      const { client } = fakeTimeClient({ baseUrl: url, requestTimeoutMs: 50, retry: { maxAttempts: 1 } });
      const err = await client.operations.get('order-silent').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: null, code: 'timeout', retryable: true, attempts: 1 });
      expect((err as ApiError).message).toMatch(
        /^no answer from http:\/\/127\.0\.0\.1:\d+\/v1\/operations\/order-silent within 50 ms/,
      );
      expect(pending.size).toBe(1);
    } finally {
      for (const res of pending) res.destroy();
      silent.close();
    }
  });
});
