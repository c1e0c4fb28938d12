// The HTTP edge's refusals, against an engine that does not exist: the API key, the
// Idempotency-Key and the body are each checked before anything reaches Temporal, and a
// refused request starts nothing.
import { describe, expect, it } from 'vitest';
import { useEdgeApps, expectProblem, ACME, auth, checkout, payment } from './edge.js';

const edge = useEdgeApps();

describe('authentication', () => {
  it('answers 401 unauthorized with WWW-Authenticate when the API key is missing', async () => {
    const res = await edge.post('/v1/payments', { headers: { 'idempotency-key': 'k' }, payload: payment });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['an unknown secret', 'Bearer sk_nobody_0123456789abcdef'],
    ['a prefix of a real secret', `Bearer ${ACME.slice(0, -1)}`],
    ['another scheme', `Basic ${ACME}`],
    ['no token', 'Bearer'],
  ])('answers 401 for %s', async (_name, authorization) => {
    const res = await edge.post('/v1/payments', { headers: { authorization, 'idempotency-key': 'k' }, payload: payment });
    expectProblem(res, 401, 'unauthorized');
  });

  it('checks the API key before the Idempotency-Key and the body', async () => {
    const res = await edge.post('/v1/payments', { headers: {}, payload: { amount: 'x' } });
    expectProblem(res, 401, 'unauthorized');
  });

  it('guards reads too', async () => {
    expectProblem(await edge.app.inject('/v1/operations/order-42'), 401, 'unauthorized');
    expectProblem(await edge.app.inject('/v1/operations'), 401, 'unauthorized');
  });

  it('accepts the scheme in any case', async () => {
    const res = await edge.post('/v1/payments', { headers: { authorization: `bearer ${ACME}` }, payload: payment });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it('in dev mode needs no API key', async () => {
    const res = await edge.post('/v1/payments', { headers: {}, payload: payment, target: edge.devApp });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it('leaves /healthz and /readyz open, and guards /openapi.json and /docs', async () => {
    expect((await edge.app.inject('/healthz')).statusCode).toBe(200);
    expect((await edge.app.inject('/readyz')).statusCode).toBe(503);
    for (const url of ['/openapi.json', '/docs']) {
      expectProblem(await edge.app.inject(url), 401, 'unauthorized');
      expect((await edge.app.inject({ url, headers: auth })).statusCode, url).toBe(200);
      expect((await edge.devApp.inject(url)).statusCode, url).toBe(200);
    }
  });
});

describe('Idempotency-Key on POST', () => {
  it('answers 400 idempotency_key_missing without the header, before looking at the body', async () => {
    const res = await edge.post('/v1/payments', { headers: auth, payload: { amount: -1 } });
    expectProblem(res, 400, 'idempotency_key_missing');
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé-42'],
    ['an empty quoted string', '""'],
    ['a space', 'order 42'],
    ['a broken quoted string', '"order-42'],
  ])('answers 400 idempotency_key_invalid for %s', async (_name, key) => {
    const res = await edge.post('/v1/checkouts', { headers: { ...auth, 'idempotency-key': key }, payload: checkout });
    expectProblem(res, 400, 'idempotency_key_invalid');
    expect(edge.startSpy).not.toHaveBeenCalled();
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
    const res = await edge.post(path, { payload });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field)).toContain(field);
    expect(edge.startSpy).not.toHaveBeenCalled();
  });

  it('lists every bad field at once', async () => {
    const res = await edge.post('/v1/payments', { payload: { amount: '1', currency: 'XXQ', extra: 1 } });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.errors?.map((e) => e.field).sort()).toEqual(['account', 'amount', 'currency', 'extra']);
  });

  it('refuses 101 items', async () => {
    const items = Array.from({ length: 101 }, (_, i) => ({ sku: `s${i}`, quantity: 1 }));
    const res = await edge.app.inject({
      method: 'POST',
      url: '/v1/checkouts',
      headers: { ...auth, 'idempotency-key': 'k' },
      payload: { ...payment, items },
    });
    // Over the 1 KiB limit of this app: the size check answers first.
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses malformed JSON with invalid_request', async () => {
    const res = await edge.post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'application/json' },
      payload: '{"account": "acc_alice",',
    });
    expectProblem(res, 400, 'invalid_request');
  });

  it('refuses an empty JSON body with invalid_request', async () => {
    const res = await edge.post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'application/json' },
      payload: '',
    });
    expectProblem(res, 400, 'invalid_request');
  });

  it('refuses a missing body with invalid_request', async () => {
    expectProblem(await edge.post('/v1/payments'), 400, 'invalid_request');
  });

  it('refuses another content type with 415', async () => {
    const res = await edge.post('/v1/payments', {
      headers: { ...auth, 'idempotency-key': 'k', 'content-type': 'text/plain' },
      payload: JSON.stringify(payment),
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('refuses an oversized body with 413 payload_too_large', async () => {
    const res = await edge.post('/v1/payments', { payload: { ...payment, description: 'd'.repeat(2000) } });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses a bad Prefer wait with invalid_request naming the header', async () => {
    for (const prefer of ['wait=61', 'wait=soon', 'wait=-1']) {
      const res = await edge.post('/v1/payments', { headers: { ...auth, 'idempotency-key': 'k', prefer }, payload: payment });
      const body = expectProblem(res, 400, 'invalid_request');
      expect(body.errors).toEqual([{ field: 'Prefer', message: expect.any(String) }]);
    }
    expect(edge.startSpy).not.toHaveBeenCalled();
  });

  it('started nothing for any refused request', async () => {
    const metrics = await edge.registry.getSingleMetricAsString('retrysafe_operations_started_total');
    expect(metrics).not.toMatch(/retrysafe_operations_started_total\{/);
  });
});
