// What the API answers for each answer the engine can give. The engine here is a scripted
// gRPC server on loopback (a real server will not refuse credentials or shed load on
// demand), reached through a real SDK client with the API's own retry interceptor, so each
// status arrives exactly as the SDK raises it. Never a 500 for a known engine answer; the
// cause goes to the log, never into the answer.
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { engineRetryInterceptor, GrpcCode } from '../../client/api/engine-errors.js';
import { startScriptedEngine, type EngineAnswer, type ScriptedEngine } from '../support/scripted-engine.js';

const SECRET = 'sk_acme_0123456789abcdef';
const auth = { authorization: `Bearer ${SECRET}` };
// Long enough for a cold first call on a loaded machine; a call the SDK retries ends on it.
const ENGINE_TIMEOUT_MS = 1_000;
const { errordetails, enums } = proto.temporal.api;

let engine: ScriptedEngine;
let connection: Connection;
let app: App;
const logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  engine = await startScriptedEngine();
  connection = await Connection.connect({ address: engine.address, interceptors: [engineRetryInterceptor()] });
  const config = loadApiConfig({
    RETRYSAFE_API_KEYS: `${SECRET}=acme`,
    RETRYSAFE_ENGINE_TIMEOUT: `${ENGINE_TIMEOUT_MS}ms`,
    LOG_LEVEL: 'info',
  });
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  app = buildApp({ config, client: new Client({ connection, namespace: 'default' }), namespace: 'default', logger });
  await app.ready();
  // The first request compiles the route's schemas and opens the HTTP/2 stream: not under test.
  engine.answer = { code: GrpcCode.PERMISSION_DENIED, details: 'warm-up' };
  await ROUTES.start();
});

afterAll(async () => {
  await app?.close();
  // A retried call's last attempt fails on its deadline at most one back-off after it: let
  // it, so no attempt meets a closed channel.
  await new Promise((r) => setTimeout(r, ENGINE_TIMEOUT_MS + 1_500));
  connection?.close();
  await engine?.close();
});

beforeEach(() => {
  logs.length = 0;
});

type Route = 'start' | 'get' | 'list' | 'cancel';
const ROUTES: Record<Route, () => Promise<LightMyRequestResponse>> = {
  start: () =>
    app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { ...auth, 'idempotency-key': 'order-1' },
      payload: { account: 'acc_alice', amount: 1250, currency: 'EUR' },
    }),
  get: () => app.inject({ url: '/v1/operations/order-1', headers: auth }),
  list: () => app.inject({ url: '/v1/operations?status=processing', headers: auth }),
  cancel: () => app.inject({ method: 'POST', url: '/v1/operations/order-1/cancel', headers: auth }),
};

interface Expected {
  status: number;
  code: string;
  /** The level of the line that carries the cause: an error when an operator must act. */
  level: 'warn' | 'error';
  /** What the logged cause says, when not the engine's own words (a retried call's deadline; a namespace the SDK names). */
  cause?: RegExp;
  errors?: unknown[];
}

const unavailable = (level: 'warn' | 'error'): Expected => ({ status: 503, code: 'engine_unavailable', level });
// The API's timer and the call's gRPC deadline expire together; either may end the call first.
const timedOut: Expected = {
  ...unavailable('warn'),
  cause: new RegExp(`did not answer within ${ENGINE_TIMEOUT_MS} ms|^DEADLINE_EXCEEDED: Deadline exceeded`),
};
const namespaceNotFound = errordetails.v1.NamespaceNotFoundFailure.encode({ namespace: 'default' }).finish();
const rateLimited = errordetails.v1.ResourceExhaustedFailure.encode({
  cause: enums.v1.ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT,
  scope: enums.v1.ResourceExhaustedScope.RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
}).finish();

/** Each answer, the routes it is tried on, and what they answer (the messages are Temporal's own). */
const CASES: Array<[why: string, answer: EngineAnswer, routes: Route[], expected: Expected]> = [
  [
    'search attributes not registered in the namespace',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'Namespace default has no mapping defined for search attribute OperationType' },
    ['start', 'get', 'cancel'],
    unavailable('error'),
  ],
  [
    'a visibility query on a search attribute not registered',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'invalid query: invalid search attribute: OperationStatus' },
    ['list'],
    unavailable('error'),
  ],
  [
    'a workflow ID over the engine limit',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'WorkflowId exceeds maximum allowed length (1202/1000)' },
    ['start', 'get', 'cancel'],
    {
      status: 400,
      code: 'invalid_request',
      level: 'warn',
      errors: [{ field: 'key', message: 'is longer than the workflow engine accepts' }],
    },
  ],
  [
    'any other malformed request',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'Invalid WorkflowIdReusePolicy.' },
    ['start', 'get', 'list', 'cancel'],
    { status: 400, code: 'invalid_request', level: 'warn', errors: [] },
  ],
  [
    'a payload over the blob size limit',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'Blob data size exceeds limit.' },
    ['start'],
    { status: 413, code: 'payload_too_large', level: 'warn' },
  ],
  [
    "a message over gRPC's size limit",
    { code: GrpcCode.RESOURCE_EXHAUSTED, details: 'grpc: received message larger than max (4401002 vs. 4194304)' },
    ['start'],
    { status: 413, code: 'payload_too_large', level: 'warn' },
  ],
  [
    'an overloaded engine (rate limit)',
    {
      code: GrpcCode.RESOURCE_EXHAUSTED,
      details: 'namespace rate limit exceeded',
      failure: { type: 'ResourceExhaustedFailure', value: rateLimited },
    },
    ['start', 'get', 'list', 'cancel'],
    { status: 503, code: 'engine_busy', level: 'warn' },
  ],
  [
    'a wrong API key (Temporal Cloud)',
    { code: GrpcCode.PERMISSION_DENIED, details: 'Request unauthorized.' },
    ['start', 'get', 'list', 'cancel'],
    unavailable('error'),
  ],
  [
    'no credentials',
    { code: GrpcCode.UNAUTHENTICATED, details: 'missing or invalid API key' },
    ['start', 'get', 'list', 'cancel'],
    unavailable('error'),
  ],
  [
    'a namespace that does not exist',
    {
      code: GrpcCode.NOT_FOUND,
      details: 'Namespace default is not found.',
      failure: { type: 'NamespaceNotFoundFailure', value: namespaceNotFound },
    },
    ['start', 'get', 'cancel'],
    { ...unavailable('error'), cause: /namespace default does not exist/ },
  ],
  [
    'a namespace that does not exist, on a call the SDK passes on as it is',
    {
      code: GrpcCode.NOT_FOUND,
      details: 'Namespace default is not found.',
      failure: { type: 'NamespaceNotFoundFailure', value: namespaceNotFound },
    },
    ['list'],
    unavailable('error'),
  ],
  [
    'a namespace not active in this cluster',
    {
      code: GrpcCode.FAILED_PRECONDITION,
      details: 'Namespace: default is active in cluster: b, while current cluster a is a standby cluster.',
    },
    ['start', 'get', 'list', 'cancel'],
    unavailable('error'),
  ],
  [
    'an API the server lacks',
    { code: GrpcCode.UNIMPLEMENTED, details: 'unknown method StartWorkflowExecution' },
    ['start', 'get', 'list', 'cancel'],
    unavailable('error'),
  ],
  [
    'an execution gone past its retention while the request ran',
    { code: GrpcCode.NOT_FOUND, details: 'workflow not found for ID: acme/order-1' },
    ['start', 'list'],
    unavailable('warn'),
  ],
  [
    'a history gone past its retention',
    { code: GrpcCode.INVALID_ARGUMENT, details: 'Requested workflow history not found, may have passed retention period.' },
    ['list'],
    unavailable('warn'),
  ],
  [
    'an existing thing, outside a start',
    { code: GrpcCode.ALREADY_EXISTS, details: 'already exists' },
    ['get'],
    unavailable('warn'),
  ],
  [
    'a deadline the server ran out of',
    { code: GrpcCode.DEADLINE_EXCEEDED, details: 'context deadline exceeded' },
    ['start', 'get'],
    unavailable('warn'),
  ],
  [
    'a call the server cancelled',
    { code: GrpcCode.CANCELLED, details: 'context canceled' },
    ['start', 'get'],
    unavailable('warn'),
  ],
  [
    'an internal error of the server',
    { code: GrpcCode.INTERNAL, details: 'shard status unknown' },
    ['start', 'get'],
    unavailable('warn'),
  ],
  // The SDK retries these until the engine deadline ends the call: the log says so.
  ['an unavailable server', { code: GrpcCode.UNAVAILABLE, details: 'connection refused' }, ['start'], timedOut],
  ['an unknown error', { code: GrpcCode.UNKNOWN, details: 'unknown' }, ['start'], timedOut],
  ['an aborted call', { code: GrpcCode.ABORTED, details: 'conflict' }, ['start'], timedOut],
  ['a value out of range', { code: GrpcCode.OUT_OF_RANGE, details: 'newer build exists' }, ['start'], timedOut],
  ['lost data', { code: GrpcCode.DATA_LOSS, details: 'corrupted' }, ['start'], timedOut],
];

const LEVELS = { warn: 40, error: 50 } as const;

describe('an engine answer', () => {
  it('RESOURCE_EXHAUSTED is answered at once with engine_busy and Retry-After: 1, not retried until the engine deadline', async () => {
    engine.answer = { code: GrpcCode.RESOURCE_EXHAUSTED, details: 'namespace rate limit exceeded' };
    engine.calls.length = 0;
    const started = Date.now();
    const res = await ROUTES.start();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'engine_busy' });
    expect(res.headers['retry-after']).toBe('1');
    expect(Date.now() - started).toBeLessThan(ENGINE_TIMEOUT_MS);
    expect(engine.calls.filter((m) => m === 'StartWorkflowExecution')).toHaveLength(1);
  });

  const rows = CASES.flatMap(([why, answer, routes, expected]) => routes.map((route) => ({ why, answer, route, expected })));
  it.each(rows)('$why ($answer.code) on $route answers $expected.status $expected.code', async ({ answer, route, expected }) => {
    engine.answer = answer;
    const res = await ROUTES[route]();
    expect(res.statusCode, res.body).toBe(expected.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ status: expected.status, code: expected.code, type: `urn:retrysafe:problem:${expected.code}` });
    if (expected.errors) expect(body.errors).toEqual(expected.errors);
    if (expected.status === 503) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // The engine's words stay in the log.
    expect(res.body).not.toContain(answer.details);

    const line = logs.find((l) => typeof l.engine === 'string');
    expect(line, JSON.stringify(logs)).toBeDefined();
    expect(line?.level).toBe(LEVELS[expected.level]);
    const cause = String(line?.cause);
    if (expected.cause) expect(cause).toMatch(expected.cause);
    else expect(cause).toContain(answer.details);
  });
});
