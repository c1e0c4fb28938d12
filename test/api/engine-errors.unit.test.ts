// What the API answers for each answer the engine can give. The engine here is a scripted
// gRPC server on loopback (a real server will not refuse credentials or shed load on
// demand), reached through a real SDK client with the API's own retry interceptor, so each
// status arrives exactly as the SDK raises it. Never a 500 for a known engine answer; the
// cause goes to the log, never into the answer.
import { setTimeout as sleep } from 'node:timers/promises';
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
  await sleep(ENGINE_TIMEOUT_MS + 1_500);
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

const ALL: Route[] = ['start', 'get', 'list', 'cancel'];
const said = (code: keyof typeof GrpcCode, details: string, failure?: EngineAnswer['failure']): EngineAnswer => ({
  code: GrpcCode[code],
  details,
  ...(failure ? { failure } : {}),
});

/** An engine answer (the messages are Temporal's own), when it comes, and the routes it is tried on. */
type Case = [why: string, answer: EngineAnswer, routes: Route[]];

/** What the API answers, and each engine answer that must come to it. */
const OUTCOMES: Array<[expected: Expected, cases: Case[]]> = [
  // An operator must act: the setup, the credentials or the server are not what the API needs.
  [
    unavailable('error'),
    [
      [
        'search attributes not registered in the namespace',
        said('INVALID_ARGUMENT', 'Namespace default has no mapping defined for search attribute OperationType'),
        ['start', 'get', 'cancel'],
      ],
      [
        'a visibility query on a search attribute not registered',
        said('INVALID_ARGUMENT', 'invalid query: invalid search attribute: OperationStatus'),
        ['list'],
      ],
      ['a wrong API key (Temporal Cloud)', said('PERMISSION_DENIED', 'Request unauthorized.'), ALL],
      ['no credentials', said('UNAUTHENTICATED', 'missing or invalid API key'), ALL],
      [
        'a namespace that does not exist, on a call the SDK passes on as it is',
        said('NOT_FOUND', 'Namespace default is not found.', { type: 'NamespaceNotFoundFailure', value: namespaceNotFound }),
        ['list'],
      ],
      [
        'a namespace not active in this cluster',
        said('FAILED_PRECONDITION', 'Namespace: default is active in cluster: b, while current cluster a is a standby cluster.'),
        ALL,
      ],
      ['an API the server lacks', said('UNIMPLEMENTED', 'unknown method StartWorkflowExecution'), ALL],
    ],
  ],
  [
    { ...unavailable('error'), cause: /namespace default does not exist/ },
    [
      [
        'a namespace that does not exist',
        said('NOT_FOUND', 'Namespace default is not found.', { type: 'NamespaceNotFoundFailure', value: namespaceNotFound }),
        ['start', 'get', 'cancel'],
      ],
    ],
  ],
  // Passing trouble at the engine: a retry later may go through.
  [
    unavailable('warn'),
    [
      [
        'an execution gone past its retention while the request ran',
        said('NOT_FOUND', 'workflow not found for ID: acme/order-1'),
        ['start', 'list'],
      ],
      [
        'a history gone past its retention',
        said('INVALID_ARGUMENT', 'Requested workflow history not found, may have passed retention period.'),
        ['list'],
      ],
      ['an existing thing, outside a start', said('ALREADY_EXISTS', 'already exists'), ['get']],
      ['a deadline the server ran out of', said('DEADLINE_EXCEEDED', 'context deadline exceeded'), ['start', 'get']],
      ['a call the server cancelled', said('CANCELLED', 'context canceled'), ['start', 'get']],
      ['an internal error of the server', said('INTERNAL', 'shard status unknown'), ['start', 'get']],
    ],
  ],
  // The SDK retries these until the engine deadline ends the call: the log says so.
  [
    timedOut,
    [
      ['an unavailable server', said('UNAVAILABLE', 'connection refused'), ['start']],
      ['an unknown error', said('UNKNOWN', 'unknown'), ['start']],
      ['an aborted call', said('ABORTED', 'conflict'), ['start']],
      ['a value out of range', said('OUT_OF_RANGE', 'newer build exists'), ['start']],
      ['lost data', said('DATA_LOSS', 'corrupted'), ['start']],
    ],
  ],
  [
    {
      status: 400,
      code: 'invalid_request',
      level: 'warn',
      errors: [{ field: 'key', message: 'is longer than the workflow engine accepts' }],
    },
    [
      [
        'a workflow ID over the engine limit',
        said('INVALID_ARGUMENT', 'WorkflowId exceeds maximum allowed length (1202/1000)'),
        ['start', 'get', 'cancel'],
      ],
    ],
  ],
  [
    { status: 400, code: 'invalid_request', level: 'warn', errors: [] },
    [['any other malformed request', said('INVALID_ARGUMENT', 'Invalid WorkflowIdReusePolicy.'), ALL]],
  ],
  [
    { status: 413, code: 'payload_too_large', level: 'warn' },
    [
      ['a payload over the blob size limit', said('INVALID_ARGUMENT', 'Blob data size exceeds limit.'), ['start']],
      [
        "a message over gRPC's size limit",
        said('RESOURCE_EXHAUSTED', 'grpc: received message larger than max (4401002 vs. 4194304)'),
        ['start'],
      ],
    ],
  ],
  [
    { status: 503, code: 'engine_busy', level: 'warn' },
    [
      [
        'an overloaded engine (rate limit)',
        said('RESOURCE_EXHAUSTED', 'namespace rate limit exceeded', { type: 'ResourceExhaustedFailure', value: rateLimited }),
        ALL,
      ],
    ],
  ],
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

  const rows = OUTCOMES.flatMap(([expected, cases]) =>
    cases.flatMap(([why, answer, routes]) => routes.map((route) => ({ why, answer, route, expected }))),
  );
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
