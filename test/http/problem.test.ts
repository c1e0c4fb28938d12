// The one problem-details convention of the API and the sandboxes.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { Problem, sendProblem } from '../../common/http/problem.js';

describe('Problem', () => {
  it('is an RFC 9457 document: standard members first, then extensions, instance when given', () => {
    const problem = new Problem(422, 'idempotency_key_reused', 'use a new key', {
      title: 'The idempotency key was used for a different request',
      extensions: { differences: ['amount'] },
    });
    expect(JSON.stringify(problem.body('/v1/payments'))).toBe(
      JSON.stringify({
        type: 'urn:retrysafe:problem:idempotency_key_reused',
        title: 'The idempotency key was used for a different request',
        status: 422,
        detail: 'use a new key',
        code: 'idempotency_key_reused',
        instance: '/v1/payments',
        differences: ['amount'],
      }),
    );
    expect(problem.body()).not.toHaveProperty('instance');
  });

  it('takes the reason phrase as title when the service has none of its own', () => {
    expect(new Problem(402, 'insufficient_funds', 'no').body().title).toBe('Payment Required');
  });

  it('never lets an extension override a standard member', () => {
    const body = new Problem(400, 'invalid_request', 'bad', { extensions: { status: 200, code: 'ok', errors: [] } }).body();
    expect(body).toMatchObject({ status: 400, code: 'invalid_request', errors: [] });
  });

  it('is sent with its status, headers and media type, extensions intact', async () => {
    const app = Fastify();
    app.get(
      '/x',
      { schema: { response: { 503: { type: 'object', properties: { code: { type: 'string' } } } } } },
      async (_req, reply) =>
        sendProblem(
          reply,
          new Problem(503, 'engine_unavailable', 'retry', { headers: { 'retry-after': '2' }, extensions: { hint: 'h' } }),
        ),
    );
    const res = await app.inject('/x');
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('2');
    // A response schema that does not list an extension cannot drop it.
    expect(res.json()).toMatchObject({ code: 'engine_unavailable', hint: 'h' });
    await app.close();
  });
});
