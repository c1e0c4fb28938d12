// What the API documents about itself, served without an engine: the OpenAPI document
// (every route's name, answers and headers, each type's own resource, the server and the
// security), the Swagger UI, and the metrics with bounded labels.
import { Type } from 'typebox';
import Schema from 'typebox/schema';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { asOperation, asOperationList } from '../../client/api/schemas.js';
import { toOperation } from '../../common/resource.js';
import { defineOperation, keyedHttpStep } from '../../workflows/definition.js';
import { BUILT_IN_DEFINITIONS } from '../../workflows/definitions/index.js';
import { DefinitionCatalog } from '../../workflows/catalog.js';
import { deadEngine } from '../support/dead-engine.js';
import { dereference } from '../support/openapi.js';
import { auth, useEdgeApps } from './edge.js';

const edge = useEdgeApps();

type Doc = {
  servers: Array<{ url: string }>;
  security: unknown[];
  components: { schemas: Record<string, Schema> };
  paths: Record<string, Record<string, OperationDoc>>;
};
type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[] };
type OperationDoc = {
  operationId: string;
  security?: unknown[];
  parameters: Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: Schema }> }
  >;
};

const documentOf = async (app = edge.app, headers: Record<string, string> = auth): Promise<Doc> => {
  const res = await app.inject({ url: '/openapi.json', headers });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json();
};
const operationsOf = (spec: Doc) =>
  Object.entries(spec.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
  );
const schemaOf = (spec: Doc, op: OperationDoc, status: string) => op.responses[status]!.content!['application/json']!.schema;

describe('documents', () => {
  it('names every route by an operationId', async () => {
    const ids = Object.fromEntries(operationsOf(await documentOf()).map(({ route, op }) => [route, op.operationId]));
    expect(ids).toEqual({
      'GET /healthz': 'get_health',
      'GET /readyz': 'get_readiness',
      'GET /metrics': 'get_metrics',
      'GET /openapi.json': 'get_openapi',
      'POST /v1/payments': 'start_payment',
      'POST /v1/checkouts': 'start_checkout',
      'POST /v1/transfers': 'start_transfer',
      'GET /v1/operations/{key}': 'get_operation',
      'POST /v1/operations/{key}/cancel': 'cancel_operation',
      'GET /v1/operations': 'list_operations',
    });
  });

  it('declares the server as the request reached it, and a relative one for a Host that cannot be a URL', async () => {
    expect((await documentOf(edge.app, { ...auth, host: 'api.internal:8443' })).servers).toEqual([
      { url: 'http://api.internal:8443', description: expect.any(String) },
    ]);
    expect((await documentOf(edge.app, { ...auth, host: '[::1]:3000' })).servers[0]!.url).toBe('http://[::1]:3000');
    for (const host of ['evil.test/x?', 'a b', '-bad-', 'h:99999999']) {
      expect((await documentOf(edge.app, { ...auth, host })).servers[0]!.url, host).toBe('/');
    }
    // The Swagger UI reads the same server.
    const ui = await edge.app.inject({ url: '/docs/json', headers: { ...auth, host: 'api.internal:8443' } });
    expect(ui.json().servers).toEqual([{ url: 'http://api.internal:8443', description: expect.any(String) }]);
  });

  it('needs the bearer key on every route but the probes; in dev mode the key is optional', async () => {
    const withKeys = await documentOf();
    expect(withKeys.security).toEqual([{ bearerAuth: [] }]);
    expect((await documentOf(edge.devApp, {})).security).toEqual([{ bearerAuth: [] }, {}]);
    for (const { route, op } of operationsOf(withKeys)) {
      // A route's own security replaces the root's: the open probes need none; the metrics
      // (the operators' view) none from this machine, RETRYSAFE_METRICS_TOKEN from elsewhere.
      const own = ['GET /healthz', 'GET /readyz'].includes(route)
        ? []
        : route === 'GET /metrics'
          ? [{}, { bearerAuth: [] }]
          : undefined;
      expect(op.security, route).toEqual(own);
    }
  });

  it("answers each start route with its own type's resource and its result fields", async () => {
    const spec = await documentOf();
    const { schemas } = spec.components;
    for (const [path, name, type, fields] of [
      ['/v1/payments', 'PaymentOperation', 'payment', ['chargeId']],
      ['/v1/checkouts', 'CheckoutOperation', 'checkout', ['reservationId', 'chargeId']],
      ['/v1/transfers', 'TransferOperation', 'transfer', ['debitId', 'creditId']],
    ] as const) {
      const op = spec.paths[path]!.post!;
      for (const status of ['200', '202']) expect(schemaOf(spec, op, status)).toEqual({ $ref: `#/components/schemas/${name}` });
      const resource = schemas[name]!;
      expect(resource.properties!.type).toMatchObject({ enum: [type] });
      expect(resource.properties!.result).toMatchObject({ type: 'object', required: [...fields] });
      expect(Object.keys(resource.properties!.result!.properties!)).toEqual([...fields]);
      // Closed for a generated type (no index signature); JSON Schema lets a field it does not name pass.
      expect(resource.properties!.result).not.toHaveProperty('additionalProperties');
      expect(resource.required).toEqual(expect.arrayContaining(['key', 'type', 'status', 'keyExpiresAt', 'cancelRequested']));
      expect(resource.properties!.steps).toEqual({ type: 'array', items: { $ref: '#/components/schemas/OperationStep' } });
    }
    // links.temporalUi is there only where the operator shows the Web UI to tenants.
    expect(schemas.OperationLinks!.required).toEqual(['self']);
  });

  it('answers a read, a cancel and a list with the resource of any type, told apart by `type`', async () => {
    const spec = await documentOf();
    const any = { $ref: '#/components/schemas/Operation' };
    expect(schemaOf(spec, spec.paths['/v1/operations/{key}']!.get!, '200')).toEqual(any);
    expect(schemaOf(spec, spec.paths['/v1/operations/{key}/cancel']!.post!, '202')).toEqual(any);
    expect(schemaOf(spec, spec.paths['/v1/operations']!.get!, '200')).toEqual({ $ref: '#/components/schemas/OperationList' });
    expect(spec.components.schemas.OperationList!.properties!.operations).toMatchObject({ items: any });
    expect(spec.components.schemas.Operation).toMatchObject({
      oneOf: ['Payment', 'Checkout', 'Transfer'].map((t) => ({ $ref: `#/components/schemas/${t}Operation` })),
      discriminator: {
        propertyName: 'type',
        mapping: {
          payment: '#/components/schemas/PaymentOperation',
          checkout: '#/components/schemas/CheckoutOperation',
          transfer: '#/components/schemas/TransferOperation',
        },
      },
    });
  });

  it("derives an outside definition's resource and route from its definition", async () => {
    const fulfilment = defineOperation({
      type: 'fulfilment',
      plural: 'fulfilments',
      description: 'Charge, then book a parcel.',
      request: Type.Object({ account: Type.String() }, { additionalProperties: false }),
      steps: [
        keyedHttpStep({
          name: 'book_parcel',
          keySuffix: 'parcel',
          service: 'carrier',
          collection: '/parcels',
          body: { account: 'account' },
          businessErrors: {},
          undo: { name: 'cancel_parcel', action: 'cancel' },
          result: { parcelId: 'id', trackingCode: 'tracking' },
          present: ['booked'],
        }),
      ],
      unavailableCode: 'carrier_unavailable',
    });
    const engine = deadEngine();
    const app = buildApp({
      config: loadApiConfig({ LOG_LEVEL: 'silent' }),
      client: engine.client,
      namespace: 'default',
      operations: new DefinitionCatalog([...BUILT_IN_DEFINITIONS, fulfilment]),
    });
    try {
      await app.ready();
      const spec = await documentOf(app, {});
      expect(spec.paths['/v1/fulfilments']!.post!.operationId).toBe('start_fulfilment');
      expect(schemaOf(spec, spec.paths['/v1/fulfilments']!.post!, '200')).toEqual({
        $ref: '#/components/schemas/FulfilmentOperation',
      });
      const resource = spec.components.schemas.FulfilmentOperation!;
      expect(resource.properties!.type).toMatchObject({ enum: ['fulfilment'] });
      expect(resource.properties!.result!.required).toEqual(['parcelId', 'trackingCode']);
      expect((spec.components.schemas.Operation!.oneOf as unknown[]).length).toBe(4);
    } finally {
      await app.close();
      await engine.close();
    }
  });

  it('documents every error answer of every route as problem details, 401 and 429 on every route behind the key', async () => {
    const spec = await documentOf();
    const problem = spec.components.schemas.Problem!;
    expect(problem.required).toEqual(['type', 'title', 'status', 'detail', 'code']);
    expect(Object.keys(problem.properties!)).toEqual(
      expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'instance', 'errors', 'differences']),
    );
    expect(problem.properties!.code!.enum).toEqual(expect.arrayContaining(['idempotency_key_reused', 'rate_limited']));
    for (const { route, op } of operationsOf(spec)) {
      const statuses = Object.keys(op.responses);
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(op.responses[status]!.content, `${route} ${status}`).toEqual({
          'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
        });
      }
      // Any request: the parser's refusals, a failure, an instance shutting down.
      expect(statuses, route).toEqual(expect.arrayContaining(['400', '408', '431', '500', '503']));
      if (op.security === undefined) {
        expect(statuses, route).toEqual(expect.arrayContaining(['401', '429']));
        expect(Object.keys(op.responses['429']!.headers!).sort(), route).toEqual([
          'RateLimit',
          'RateLimit-Policy',
          'Retry-After',
        ]);
      }
      expect(Object.keys(op.responses['503']!.headers!), route).toEqual(['Retry-After']);
    }
  });

  it('documents every answer of the POST routes, and the headers the contract names', async () => {
    const spec = await documentOf();
    for (const path of ['/v1/payments', '/v1/checkouts', '/v1/transfers']) {
      const op = spec.paths[path]!.post!;
      expect(Object.keys(op.responses).sort()).toEqual(
        ['200', '202', '400', '401', '408', '413', '415', '422', '429', '431', '500', '503'].sort(),
      );
      expect(op.responses['429']!.description).toMatch(/^rate_limited/);
      expect(op.responses['503']!.description).toMatch(/engine_unavailable.*engine_busy.*shutting_down/);
      expect(op.responses['422']!.description).toMatch(/^idempotency_key_reused.*differences/);
      expect(Object.keys(op.responses['200']!.headers!)).toEqual(
        expect.arrayContaining(['Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy']),
      );
      expect(Object.keys(op.responses['202']!.headers!)).toEqual(
        expect.arrayContaining(['Idempotent-Replayed', 'Location', 'Retry-After', 'RateLimit', 'RateLimit-Policy']),
      );
      const headers = op.parameters.filter((p) => p.in === 'header');
      expect(headers.map((p) => [p.name, p.required])).toEqual([
        ['idempotency-key', true],
        ['prefer', false],
      ]);
      expect(op.requestBody!.content['application/json']!.schema.additionalProperties).toBe(false);
    }
    const cancel = spec.paths['/v1/operations/{key}/cancel']!.post!;
    expect(Object.keys(cancel.responses)).toEqual(expect.arrayContaining(['202', '401', '404', '409', '503']));
    expect(Object.keys(cancel.responses['202']!.headers!)).toEqual(expect.arrayContaining(['Location', 'Retry-After']));
    expect(cancel.requestBody).toBeUndefined();
    const cursor = spec.paths['/v1/operations']!.get!.parameters.find((p) => p.name === 'cursor')!;
    expect(cursor.schema).toMatchObject({ minLength: 12, pattern: '^[A-Za-z0-9_-]+$' });
  });

  it('describes the resources the server builds: a payment, a transfer, and any of them by its type', async () => {
    const { components } = dereference(await documentOf());
    const check = (name: string, value: unknown) => Schema.Compile(components.schemas[name] as never).Check(value);
    const ctx = { temporalUiUrl: 'http://localhost:8233', namespace: 'default', retentionMs: 86_400_000 };
    const completed = (type: string, result: Record<string, string>) =>
      toOperation(
        {
          workflowId: 'acme/k1',
          status: { name: 'COMPLETED' },
          startTime: new Date('2030-01-01T00:00:00Z'),
          closeTime: new Date('2030-01-01T00:00:01Z'),
          memo: { type, key: 'k1' },
        },
        { status: 'succeeded', result, steps: [{ name: 's', status: 'completed', downstreamKey: 'acme/k1/s' }] },
        ctx,
      );
    const payment = completed('payment', { chargeId: 'ch_1' });
    const transfer = completed('transfer', { debitId: 'ch_2', creditId: 'cr_1' });
    expect(check('PaymentOperation', payment)).toBe(true);
    expect(check('TransferOperation', transfer)).toBe(true);
    expect(check('Operation', payment) && check('Operation', transfer)).toBe(true);
    // Not a payment's: another type, or a result without its chargeId.
    expect(check('PaymentOperation', transfer)).toBe(false);
    expect(check('PaymentOperation', completed('payment', { debitId: 'x' }))).toBe(false);
    expect(check('Operation', { ...payment, type: 'refund' })).toBe(false);
    const { temporalUi: _ui, ...untold } = payment.links;
    expect(check('PaymentOperation', { ...payment, links: untold })).toBe(true);
  });

  it('serialises every resource whole, whatever its type or result fields (one started on an older definition)', () => {
    const resource = {
      key: 'k1',
      type: 'retired_type',
      status: 'succeeded',
      step: 'charge_payment',
      createdAt: '2030-01-01T00:00:00.000Z',
      completedAt: '2030-01-01T00:00:01.000Z',
      keyExpiresAt: '2030-01-02T00:00:01.000Z',
      result: { chargeId: 'ch_1', renamedSince: 'x' },
      steps: [],
      needsAttention: false,
      cancelRequested: false,
      links: { self: '/v1/operations/k1' },
    };
    expect(JSON.parse(asOperation({ httpStatus: '200' })(resource))).toEqual(resource);
    const list = { operations: [resource], nextCursor: null };
    expect(JSON.parse(asOperationList({ httpStatus: '200' })(list))).toEqual(list);
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
    // A scrape from this machine (inject's peer is 127.0.0.1), which needs no key.
    const res = await edge.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    for (const name of [
      'retrysafe_operations_started_total',
      'retrysafe_replays_total',
      'retrysafe_fingerprint_conflicts_total',
      'retrysafe_waits_timed_out_total',
      'retrysafe_cache_hits_total',
      'retrysafe_admission_refused_total',
      'retrysafe_operations_in_flight',
      'retrysafe_api_dev_mode',
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
