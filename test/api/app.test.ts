// The HTTP edge against a Temporal client whose server does not exist (127.0.0.1:1):
// every refusal must happen before any Temporal call, and the calls that do happen must
// turn into 503 engine_unavailable, never a 500.
import type { Client } from '@temporalio/client';
import type { LightMyRequestResponse } from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';

const ACME = 'sk_acme_0123456789abcdef';
const BETA = 'sk_beta_0123456789abcdef';
const auth = { authorization: `Bearer ${ACME}` };
const payment = { account: 'acc_alice', amount: 1250, currency: 'EUR' };
const checkout = { ...payment, items: [{ sku: 'sku_book', quantity: 2 }] };

let engine: DeadEngine;
let client: Client;
let app: App;
let devApp: App;
let registry: Registry;
let startSpy: ReturnType<typeof vi.spyOn>;

beforeAll(async () => {
  engine = deadEngine();
  client = engine.client;
  startSpy = vi.spyOn(client.workflow, 'start');
  registry = new Registry();
  const config = loadApiConfig({
    RETRYSAFE_API_KEYS: `${ACME}=acme,${BETA}=beta`,
    RETRYSAFE_BODY_LIMIT: '1024',
    RETRYSAFE_ENGINE_TIMEOUT: '300ms',
    LOG_LEVEL: 'silent',
  });
  app = buildApp({ config, client, namespace: 'default', registry });
  devApp = buildApp({
    config: loadApiConfig({ RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'silent' }),
    client,
    namespace: 'default',
  });
  await Promise.all([app.ready(), devApp.ready()]);
});

afterEach(() => {
  startSpy.mockClear();
});

afterAll(async () => {
  await Promise.all([app.close(), devApp.close()]);
  await engine.close();
});

function post(path: string, opts: { headers?: Record<string, string>; payload?: unknown; target?: App } = {}) {
  return (opts.target ?? app).inject({
    method: 'POST',
    url: path,
    headers: opts.headers ?? { ...auth, 'idempotency-key': 'order-42' },
    ...(opts.payload === undefined ? {} : { payload: opts.payload as object }),
  });
}

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code, type: `urn:retrysafe:problem:${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body as { errors?: { field: string; message: string }[]; differences?: string[]; instance?: string };
}

describe('authentication', () => {
  it('answers 401 unauthorized with WWW-Authenticate when the API key is missing', async () => {
    const res = await post('/v1/payments', { headers: { 'idempotency-key': 'k' }, payload: payment });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['an unknown secret', 'Bearer sk_nobody_0123456789abcdef'],
    ['a prefix of a real secret', `Bearer ${ACME.slice(0, -1)}`],
    ['another scheme', `Basic ${ACME}`],
    ['no token', 'Bearer'],
  ])('answers 401 for %s', async (_name, authorization) => {
    const res = await post('/v1/payments', { headers: { authorization, 'idempotency-key': 'k' }, payload: payment });
    expectProblem(res, 401, 'unauthorized');
  });

  it('checks the API key before the Idempotency-Key and the body', async () => {
    const res = await post('/v1/payments', { headers: {}, payload: { amount: 'x' } });
    expectProblem(res, 401, 'unauthorized');
  });

  it('guards reads too', async () => {
    expectProblem(await app.inject('/v1/operations/order-42'), 401, 'unauthorized');
    expectProblem(await app.inject('/v1/operations'), 401, 'unauthorized');
  });

  it('accepts the scheme in any case', async () => {
    const res = await post('/v1/payments', { headers: { authorization: `bearer ${ACME}` }, payload: payment });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it('in dev mode needs no API key', async () => {
    const res = await post('/v1/payments', { headers: {}, payload: payment, target: devApp });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it('leaves /healthz and /readyz open, and guards /metrics, /openapi.json and /docs', async () => {
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    expect((await app.inject('/readyz')).statusCode).toBe(503);
    for (const url of ['/metrics', '/openapi.json', '/docs']) {
      expectProblem(await app.inject(url), 401, 'unauthorized');
      expect((await app.inject({ url, headers: auth })).statusCode, url).toBe(200);
      expect((await devApp.inject(url)).statusCode, url).toBe(200);
    }
  });
});

describe('Idempotency-Key on POST', () => {
  it('answers 400 idempotency_key_missing without the header, before looking at the body', async () => {
    const res = await post('/v1/payments', { headers: auth, payload: { amount: -1 } });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé-42'],
    ['an empty quoted string', '""'],
    ['a space', 'order 42'],
    ['a broken quoted string', '"order-42'],
  ])('answers 400 idempotency_key_invalid for %s', async (_name, key) => {
    const res = await post('/v1/checkouts', { headers: { ...auth, 'idempotency-key': key }, payload: checkout });
    expectProblem(res, 400, 'idempotency_key_invalid');
    expect(startSpy).not.toHaveBeenCalled();
  });
});

describe('body validation', () => {
  const cases: [string, string, unknown, string][] = [
    ['a negative amount', '/v1/payments', { ...payment, amount: -5 }, 'amount'],
    ['a zero amount', '/v1/payments', { ...payment, amount: 0 }, 'amount'],
    ['a fractional amount', '/v1/payments', { ...payment, amount: 12.5 }, 'amount'],
    ['a string amount', '/v1/payments', { ...payment, amount: '1250' }, 'amount'],
    ['an amount above 10^12', '/v1/payments', { ...payment, amount: 1_000_000_000_001 }, 'amount'],
    ['an unknown currency', '/v1/payments', { ...payment, currency: 'XXQ' }, 'currency'],
    ['a lower-case currency', '/v1/payments', { ...payment, currency: 'eur' }, 'currency'],
    ['an unknown field', '/v1/payments', { ...payment, tip: 5 }, 'tip'],
    ['a missing account', '/v1/payments', { amount: 1, currency: 'EUR' }, 'account'],
    ['an empty account', '/v1/payments', { ...payment, account: '' }, 'account'],
    ['a 129-character account', '/v1/payments', { ...payment, account: 'a'.repeat(129) }, 'account'],
    ['a 501-character description', '/v1/payments', { ...payment, description: 'd'.repeat(501) }, 'description'],
    ['items on a payment', '/v1/payments', checkout, 'items'],
    ['a checkout without items', '/v1/checkouts', payment, 'items'],
    ['a checkout with no item', '/v1/checkouts', { ...payment, items: [] }, 'items'],
    ['a zero quantity', '/v1/checkouts', { ...payment, items: [{ sku: 's', quantity: 0 }] }, 'items[0].quantity'],
    ['a quantity above 1000', '/v1/checkouts', { ...payment, items: [{ sku: 's', quantity: 1001 }] }, 'items[0].quantity'],
    ['a string quantity', '/v1/checkouts', { ...payment, items: [{ sku: 's', quantity: '1' }] }, 'items[0].quantity'],
    ['an empty sku', '/v1/checkouts', { ...payment, items: [{ sku: '', quantity: 1 }] }, 'items[0].sku'],
    ['an unknown item field', '/v1/checkouts', { ...payment, items: [{ sku: 's', quantity: 1, gift: true }] }, 'items[0].gift'],
    ['an array body', '/v1/payments', [payment], 'body'],
  ];

  it.each(cases)('refuses %s with invalid_request naming the field', async (_name, path, payload, field) => {
    const res = await post(path, { payload });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field)).toContain(field);
    expect(startSpy).not.toHaveBeenCalled();
  });

  it('lists every bad field at once', async () => {
    const res = await post('/v1/payments', { payload: { amount: '1', currency: 'XXQ', extra: 1 } });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field).sort()).toEqual(['account', 'amount', 'currency', 'extra']);
  });

  it('refuses 101 items', async () => {
    const items = Array.from({ length: 101 }, (_, i) => ({ sku: `s${i}`, quantity: 1 }));
    const res = await app.inject({
      method: 'POST',
      url: '/v1/checkouts',
      headers: { ...auth, 'idempotency-key': 'k' },
      payload: { ...payment, items },
    });
    // Over the 1 KiB limit of this app: the size check answers first.
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses malformed JSON with invalid_request', async () => {
    const res = await post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'application/json' },
      payload: '{"account": "acc_alice",',
    });
    expectProblem(res, 400, 'invalid_request');
  });

  it('refuses an empty JSON body with invalid_request', async () => {
    const res = await post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'application/json' },
      payload: '',
    });
    expectProblem(res, 400, 'invalid_request');
  });

  it('refuses a missing body with invalid_request', async () => {
    expectProblem(await post('/v1/payments'), 400, 'invalid_request');
  });

  it('refuses another content type with 415', async () => {
    const res = await post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'text/plain' },
      payload: JSON.stringify(payment),
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('refuses an oversized body with 413 payload_too_large', async () => {
    const res = await post('/v1/payments', { payload: { ...payment, description: 'd'.repeat(2000) } });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses a bad Prefer wait with invalid_request naming the header', async () => {
    for (const prefer of ['wait=61', 'wait=soon', 'wait=-1']) {
      const res = await post('/v1/payments', { headers: { ...auth, 'idempotency-key': 'k', prefer }, payload: payment });
      const body = expectProblem(res, 400, 'invalid_request');
      expect(body.errors).toEqual([{ field: 'Prefer', message: expect.any(String) }]);
    }
    expect(startSpy).not.toHaveBeenCalled();
  });

  it('started nothing for any refused request', async () => {
    const metrics = await registry.getSingleMetricAsString('retrysafe_operations_started_total');
    expect(metrics).not.toMatch(/retrysafe_operations_started_total\{/);
  });
});

describe('with Temporal unreachable', () => {
  it('answers a valid POST with 503 engine_unavailable and Retry-After, not 500', async () => {
    const started = Date.now();
    const res = await post('/v1/payments', { headers: { ...auth, 'idempotency-key': '"order-42"' }, payload: payment });
    const body = expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBe('2');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(startSpy).toHaveBeenCalledTimes(1);
    expect(startSpy.mock.calls[0]?.[1]).toMatchObject({ workflowId: 'acme/order-42', workflowIdReusePolicy: 'REJECT_DUPLICATE' });
    // Nothing about the cause (addresses, stack traces) leaks into the answer.
    expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'instance', 'status', 'title', 'type']);
    expect(res.body).not.toMatch(/127\.0\.0\.1|stack|at /);
  });

  it('answers a valid checkout with 503 too', async () => {
    const res = await post('/v1/checkouts', { payload: checkout });
    expectProblem(res, 503, 'engine_unavailable');
  });

  it('answers GET /v1/operations/{key} with 503', async () => {
    const res = await app.inject({ url: '/v1/operations/order-42', headers: auth });
    expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBe('2');
  });

  it('answers a key with "/" (encoded or not) with 503, so the route matched', async () => {
    expectProblem(await app.inject({ url: '/v1/operations/acme%2Forder', headers: auth }), 503, 'engine_unavailable');
    expectProblem(await app.inject({ url: '/v1/operations/a/b/c', headers: auth }), 503, 'engine_unavailable');
  });

  it('answers GET /v1/operations with 503', async () => {
    expectProblem(
      await app.inject({ url: '/v1/operations?status=processing&type=checkout&limit=10', headers: auth }),
      503,
      'engine_unavailable',
    );
  });

  it('answers /readyz with 503 engine_unavailable and /healthz with 200', async () => {
    const ready = await app.inject('/readyz');
    expectProblem(ready, 503, 'engine_unavailable');
    expect(ready.headers['retry-after']).toBeDefined();
    const health = await app.inject('/healthz');
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
  });
});

describe('reads that need no engine', () => {
  it('answers a key that cannot exist with 404 operation_not_found', async () => {
    for (const url of ['/v1/operations/' + 'k'.repeat(256), '/v1/operations/cl%C3%A9', '/v1/operations/']) {
      expectProblem(await app.inject({ url, headers: auth }), 404, 'operation_not_found');
    }
  });

  it('answers a badly encoded path with 400', async () => {
    expectProblem(await app.inject({ url: '/v1/operations/%ZZ', headers: auth }), 400, 'invalid_request');
  });

  it.each([
    ['status=done', 'status'],
    ['type=refund', 'type'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=***', 'cursor'],
    ['cursor=abcd', 'cursor'],
    // Shorter than any cursor the API issues: the published schema refuses it too.
    ['cursor=0', 'cursor'],
    ['sort=asc', 'sort'],
  ])('refuses ?%s with invalid_request naming %s', async (query, field) => {
    const res = await app.inject({ url: `/v1/operations?${query}`, headers: auth });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field)).toContain(field);
  });

  it('answers an unknown route with 404 not_found', async () => {
    const res = await app.inject('/v2/payments');
    expectProblem(res, 404, 'not_found');
  });
});

describe('a method a known path does not support', () => {
  it.each([
    ['PUT', '/v1/payments', 'POST'],
    ['TRACE', '/v1/payments', 'POST'],
    ['DELETE', '/v1/checkouts', 'POST'],
    ['QUERY', '/v1/operations', 'GET, HEAD'],
    ['PATCH', '/v1/operations/order-42', 'GET, HEAD'],
    ['POST', '/v1/operations/order-42', 'GET, HEAD'],
    ['DELETE', '/v1/operations/a/b/cancel', 'POST'],
    ['OPTIONS', '/v1/operations/order-42/cancel', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
  ])('%s %s answers 405 method_not_allowed with Allow: %s', async (method, url, allow) => {
    const res = await app.inject({ method: method as 'GET', url, headers: auth });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe(allow);
    expect(startSpy).not.toHaveBeenCalled();
  });

  it('answers 405 without an API key too, as an unknown path answers 404: the methods tell nothing', async () => {
    const res = await app.inject({ method: 'PUT', url: '/v1/payments' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST');
  });

  it('leaves an unknown path at 404 not_found', async () => {
    expectProblem(await app.inject({ method: 'PUT', url: '/v2/payments', headers: auth }), 404, 'not_found');
  });
});

describe('POST /v1/operations/{key}/cancel, refused at the edge', () => {
  it('answers a key that cannot exist with 404 operation_not_found, without asking the engine', async () => {
    for (const key of ['k'.repeat(256), 'cl%C3%A9']) {
      const res = await post(`/v1/operations/${key}/cancel`, { headers: auth });
      expectProblem(res, 404, 'operation_not_found');
    }
  });

  it('needs an API key', async () => {
    expectProblem(await post('/v1/operations/order-42/cancel', { headers: {} }), 401, 'unauthorized');
  });

  it('answers 503 engine_unavailable with Retry-After when Temporal is unreachable', async () => {
    const res = await post('/v1/operations/order-42/cancel', { headers: auth });
    expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBeDefined();
  });
});

describe('documents', () => {
  it('serves an OpenAPI 3 document that documents every answer of the POST routes', async () => {
    const res = await app.inject({ url: '/openapi.json', headers: auth });
    expect(res.statusCode).toBe(200);
    const spec = res.json();
    expect(spec.openapi).toMatch(/^3\./);
    for (const path of ['/v1/payments', '/v1/checkouts']) {
      const op = spec.paths[path].post;
      expect(Object.keys(op.responses).sort()).toEqual(['200', '202', '400', '401', '413', '415', '422', '429', '500', '503']);
      expect(Object.keys(op.responses['429'].headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
      expect(op.responses['429'].description).toMatch(/^rate_limited/);
      expect(op.responses['503'].description).toMatch(/engine_unavailable.*engine_busy/);
      expect(op.responses['202'].headers).toHaveProperty('Location');
      expect(op.responses['202'].headers).toHaveProperty('Retry-After');
      expect(op.responses['503'].headers).toHaveProperty('Retry-After');
      expect(op.responses['422'].content).toHaveProperty(['application/problem+json']);
      expect(op.parameters.map((p: { name: string }) => p.name)).toContain('idempotency-key');
    }
    expect(spec.paths).toHaveProperty(['/v1/operations/{key}']);
    expect(spec.paths).toHaveProperty(['/v1/operations']);
    expect(spec.paths['/v1/payments'].post.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
  });

  it('declares Idempotent-Replayed, Location and Retry-After where they are sent, and the cancel route', async () => {
    const spec = (await app.inject({ url: '/openapi.json', headers: auth })).json();
    for (const path of ['/v1/payments', '/v1/checkouts']) {
      const { responses } = spec.paths[path].post;
      expect(Object.keys(responses['200'].headers)).toContain('Idempotent-Replayed');
      expect(Object.keys(responses['202'].headers)).toEqual(
        expect.arrayContaining(['Idempotent-Replayed', 'Location', 'Retry-After']),
      );
    }
    const cancel = spec.paths['/v1/operations/{key}/cancel'].post;
    expect(Object.keys(cancel.responses)).toEqual(expect.arrayContaining(['202', '401', '404', '409', '503']));
    expect(Object.keys(cancel.responses['202'].headers)).toEqual(expect.arrayContaining(['Location', 'Retry-After']));
    expect(cancel.requestBody).toBeUndefined();
    const operation = spec.paths['/v1/operations/{key}'].get.responses['200'].content['application/json'].schema;
    const resolved = operation.$ref ? spec.components.schemas[operation.$ref.split('/').pop()] : operation;
    expect(resolved.required).toEqual(expect.arrayContaining(['keyExpiresAt', 'cancelRequested']));
    expect(resolved.properties).toHaveProperty('notification');
    const cursor = spec.paths['/v1/operations'].get.parameters.find((p: { name: string }) => p.name === 'cursor');
    expect(cursor.schema).toMatchObject({ minLength: 12, pattern: '^[A-Za-z0-9_-]+$' });
  });

  it('serves the Swagger UI at /docs', async () => {
    const res = await app.inject({ url: '/docs', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('exposes the API metrics, with bounded labels', async () => {
    const res = await app.inject({ url: '/metrics', headers: auth });
    expect(res.statusCode).toBe(200);
    for (const name of [
      'retrysafe_operations_started_total',
      'retrysafe_replays_total',
      'retrysafe_fingerprint_conflicts_total',
      'retrysafe_waits_timed_out_total',
      'retrysafe_cache_hits_total',
      'retrysafe_admission_refused_total',
      'retrysafe_admission_bypassed_total',
      'retrysafe_operations_in_flight',
      'retrysafe_http_request_duration_seconds',
    ]) {
      expect(res.body).toContain(`# TYPE ${name}`);
    }
    expect(res.body).toMatch(
      /retrysafe_http_request_duration_seconds_count\{route="\/v1\/payments",method="POST",status="400"\}/,
    );
    expect(res.body).toMatch(/route="\/v1\/operations\/:key"/);
    expect(res.body).not.toContain('order-42');
  });
});
