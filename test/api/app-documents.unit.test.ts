// What the API documents about itself, served without an engine: the OpenAPI document
// (every answer, header and route), the Swagger UI, and the metrics with bounded labels.
import { describe, expect, it } from 'vitest';
import { auth, useEdgeApps } from './edge.js';

const edge = useEdgeApps();

describe('documents', () => {
  it('serves an OpenAPI 3 document that documents every answer of the POST routes', async () => {
    const res = await edge.app.inject({ url: '/openapi.json', headers: auth });
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
    const spec = (await edge.app.inject({ url: '/openapi.json', headers: auth })).json();
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
    const res = await edge.app.inject({ url: '/docs', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('exposes the API metrics, with bounded labels', async () => {
    // A refused start and a read of a key, for the request durations to label.
    expect((await edge.post('/v1/payments', { payload: { amount: -1 } })).statusCode).toBe(400);
    expect((await edge.app.inject({ url: '/v1/operations/order-42', headers: auth })).statusCode).toBe(503);
    const res = await edge.app.inject({ url: '/metrics', headers: auth });
    expect(res.statusCode).toBe(200);
    for (const name of [
      'retrysafe_operations_started_total',
      'retrysafe_replays_total',
      'retrysafe_fingerprint_conflicts_total',
      'retrysafe_waits_timed_out_total',
      'retrysafe_cache_hits_total',
      'retrysafe_admission_refused_total',
      'retrysafe_operations_in_flight',
      'retrysafe_in_flight_limit',
      'retrysafe_engine_latency_ratio',
      'retrysafe_tenant_share',
      'retrysafe_http_request_duration_seconds',
    ]) {
      expect(res.body).toContain(`# TYPE ${name}`);
    }
    expect(res.body).toMatch(
      /retrysafe_http_request_duration_seconds_count\{route="\/v1\/payments",method="POST",status="400"\}/,
    );
    expect(res.body).toMatch(/route="\/v1\/operations\/:key"/);
    expect(res.body).not.toContain('order-42');
    // The one label that names a tenant: its share of the in-flight limit (tenants are the API keys' ones).
    expect(res.body).toMatch(/^retrysafe_tenant_share\{tenant="acme"\} \d+/m);
    expect(res.body).toMatch(/^retrysafe_in_flight_limit 64$/m);
  });
});
