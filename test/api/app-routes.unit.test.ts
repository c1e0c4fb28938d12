// Routes against an engine that does not exist: what needs the engine answers 503
// engine_unavailable with Retry-After (never a 500, nothing of the cause); what does not
// (a key that cannot exist, a bad query, a method the path lacks) is answered at the edge.
import { describe, expect, it } from 'vitest';
import { useEdgeApps, expectProblem, auth, checkout, payment } from './edge.js';

const edge = useEdgeApps();

describe('with Temporal unreachable', () => {
  it('answers a valid POST with 503 engine_unavailable and Retry-After, not 500', async () => {
    const started = Date.now();
    const res = await edge.post('/v1/payments', { headers: { ...auth, 'idempotency-key': '"order-42"' }, payload: payment });
    const body = expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBe('2');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(edge.startSpy).toHaveBeenCalledTimes(1);
    expect(edge.startSpy.mock.calls[0]?.[1]).toMatchObject({
      workflowId: 'acme/order-42',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    // Nothing about the cause (addresses, stack traces) leaks into the answer.
    expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'instance', 'status', 'title', 'type']);
    expect(res.body).not.toMatch(/127\.0\.0\.1|stack|at /);
  });

  it('answers a valid checkout with 503 too', async () => {
    const res = await edge.post('/v1/checkouts', { payload: checkout });
    expectProblem(res, 503, 'engine_unavailable');
  });

  it('answers GET /v1/operations/{key} with 503', async () => {
    const res = await edge.app.inject({ url: '/v1/operations/order-42', headers: auth });
    expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBe('2');
  });

  it('answers a key with "/" (encoded or not) with 503, so the route matched', async () => {
    expectProblem(await edge.app.inject({ url: '/v1/operations/acme%2Forder', headers: auth }), 503, 'engine_unavailable');
    expectProblem(await edge.app.inject({ url: '/v1/operations/a/b/c', headers: auth }), 503, 'engine_unavailable');
  });

  it('answers GET /v1/operations with 503', async () => {
    expectProblem(
      await edge.app.inject({ url: '/v1/operations?status=processing&type=checkout&limit=10', headers: auth }),
      503,
      'engine_unavailable',
    );
  });

  it('answers /readyz with 503 engine_unavailable and /healthz with 200', async () => {
    const ready = await edge.app.inject('/readyz');
    expectProblem(ready, 503, 'engine_unavailable');
    expect(ready.headers['retry-after']).toBe('2');
    const health = await edge.app.inject('/healthz');
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
  });
});

describe('reads that need no engine', () => {
  it('answers a key that cannot exist with 404 operation_not_found', async () => {
    for (const url of ['/v1/operations/' + 'k'.repeat(256), '/v1/operations/cl%C3%A9', '/v1/operations/']) {
      expectProblem(await edge.app.inject({ url, headers: auth }), 404, 'operation_not_found');
    }
  });

  it('answers a badly encoded path with 400', async () => {
    expectProblem(await edge.app.inject({ url: '/v1/operations/%ZZ', headers: auth }), 400, 'invalid_request');
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
    const res = await edge.app.inject({ url: `/v1/operations?${query}`, headers: auth });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field)).toContain(field);
  });

  it('answers an unknown route with 404 not_found', async () => {
    const res = await edge.app.inject('/v2/payments');
    expectProblem(res, 404, 'not_found');
  });
});

describe('a method a known path does not support', () => {
  /** Each known path, the methods it allows, and methods tried on it that it does not. */
  const PATHS: Array<[url: string, allow: string, refused: string[]]> = [
    ['/v1/payments', 'POST', ['PUT', 'TRACE']],
    ['/v1/checkouts', 'POST', ['DELETE']],
    ['/v1/operations', 'GET, HEAD', ['QUERY']],
    ['/v1/operations/order-42', 'GET, HEAD', ['PATCH', 'POST']],
    ['/v1/operations/a/b/cancel', 'POST', ['DELETE']],
    ['/v1/operations/order-42/cancel', 'POST', ['OPTIONS']],
    ['/healthz', 'GET, HEAD', ['POST']],
  ];
  it.each(PATHS.flatMap(([url, allow, refused]) => refused.map((method) => [method, url, allow])))(
    '%s %s answers 405 method_not_allowed with Allow: %s',
    async (method, url, allow) => {
      const res = await edge.app.inject({ method: method as 'GET', url, headers: auth });
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe(allow);
      expect(edge.startSpy).not.toHaveBeenCalled();
    },
  );

  it('answers 405 without an API key too, as an unknown path answers 404: the methods tell nothing', async () => {
    const res = await edge.app.inject({ method: 'PUT', url: '/v1/payments' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST');
  });

  it('leaves an unknown path at 404 not_found', async () => {
    expectProblem(await edge.app.inject({ method: 'PUT', url: '/v2/payments', headers: auth }), 404, 'not_found');
  });
});

describe('POST /v1/operations/{key}/cancel, refused at the edge', () => {
  it('answers a key that cannot exist with 404 operation_not_found, without asking the engine', async () => {
    for (const key of ['k'.repeat(256), 'cl%C3%A9']) {
      const res = await edge.post(`/v1/operations/${key}/cancel`, { headers: auth });
      expectProblem(res, 404, 'operation_not_found');
    }
  });

  it('needs an API key', async () => {
    expectProblem(await edge.post('/v1/operations/order-42/cancel', { headers: {} }), 401, 'unauthorized');
  });

  it('answers 503 engine_unavailable with Retry-After when Temporal is unreachable', async () => {
    const res = await edge.post('/v1/operations/order-42/cancel', { headers: auth });
    expectProblem(res, 503, 'engine_unavailable');
    expect(res.headers['retry-after']).toBe('2');
  });
});
