// Admission at the HTTP edge, against a Temporal client whose server does not exist: a
// request that is admitted goes on to the engine and answers 503 engine_unavailable, a
// refused one answers 429 without any engine call and before its body is read. So what is
// decided here is decided before the engine, which is what admission is. The in-flight
// limit, the waiters of one key and the replays need operations that exist:
// admission-stack.test.ts.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { Registry } from 'prom-client';
import { parseList } from 'structured-headers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { toProblem } from '../../client/api/error-handler.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';
import { ACME, BETA, expectProblem, payment } from './edge.js';

const FREE = 'sk_free_0123456789abcdef';
const KEYS = `${ACME}=acme,${BETA}=beta,${FREE}=free`;

let engine: DeadEngine;
let dir: string;
const apps: App[] = [];
let startSpy: ReturnType<typeof vi.spyOn>;
let handleSpy: ReturnType<typeof vi.spyOn>;
let n = 0;
const newKey = () => `admission-${process.pid}-${++n}`;

beforeAll(() => {
  engine = deadEngine();
  startSpy = vi.spyOn(engine.client.workflow, 'start');
  // Every read of an execution (describe, result, a cancel) starts from a handle.
  handleSpy = vi.spyOn(engine.client.workflow, 'getHandle');
  dir = mkdtempSync(join(tmpdir(), 'admission-'));
});

afterEach(() => {
  startSpy.mockClear();
  handleSpy.mockClear();
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

async function appWith(env: Record<string, string>, registry = new Registry()): Promise<App> {
  const config = loadApiConfig({
    RETRYSAFE_API_KEYS: KEYS,
    RETRYSAFE_ENGINE_TIMEOUT: '150ms',
    RETRYSAFE_LIMITS_DB: join(dir, `limits-${apps.length}.db`),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = buildApp({ config, client: engine.client, namespace: 'default', registry });
  apps.push(app);
  await app.ready();
  return app;
}

function start(app: App, secret: string, key: string, opts: { prefer?: string } = {}) {
  return app.inject({
    method: 'POST',
    url: '/v1/payments',
    headers: { authorization: `Bearer ${secret}`, 'idempotency-key': key, ...(opts.prefer ? { prefer: opts.prefer } : {}) },
    payload: payment,
  });
}

/** The one item of a RateLimit or RateLimit-Policy field, parsed as a structured-field list. */
function fieldItem(res: LightMyRequestResponse, name: string): { name: unknown; params: Record<string, unknown> } {
  const raw = res.headers[name];
  expect(typeof raw).toBe('string');
  const list = parseList(raw as string);
  expect(list).toHaveLength(1);
  const [value, params] = list[0] as [unknown, Map<string, unknown>];
  return { name: value, params: Object.fromEntries(params) };
}

const startedKeys = () => startSpy.mock.calls.map((c: unknown[]) => (c[1] as { workflowId: string }).workflowId);

describe('a tenant over its rate', () => {
  it('is answered 429 rate_limited with Retry-After, RateLimit and RateLimit-Policy, and nothing is started', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=2/h' });
    const admitted = [await start(app, ACME, newKey()), await start(app, ACME, newKey())];
    for (const res of admitted) expectProblem(res, 503, 'engine_unavailable');
    expect(admitted.map((r) => fieldItem(r, 'ratelimit').params.r)).toEqual([1, 0]);
    expect(startSpy).toHaveBeenCalledTimes(2);

    const key = newKey();
    const res = await start(app, ACME, key);
    const body = expectProblem(res, 429, 'rate_limited');
    expect(body.title).toBe('This tenant is over its limit; retry after Retry-After (a new operation with the same key)');
    expect(body.detail).toMatch(
      /^tenant acme is over its limit of 2 new operations per hour; nothing was started, retry in \d+ s/,
    );
    const policy = fieldItem(res, 'ratelimit-policy');
    expect(policy).toEqual({ name: 'tenant', params: { q: 2, w: 3600 } });
    expect(res.headers['ratelimit-policy']).toBe('"tenant";q=2;w=3600');
    const limit = fieldItem(res, 'ratelimit');
    expect(limit.name).toBe('tenant');
    expect(limit.params.r).toBe(0);
    const t = limit.params.t as number;
    expect(Number.isInteger(t) && t >= 1 && t <= 3600).toBe(true);
    expect(res.headers['ratelimit']).toBe(`"tenant";r=0;t=${t}`);
    expect(res.headers['retry-after']).toBe(String(t));
    expect(startedKeys()).not.toContain(`acme/${key}`);
    expect(startSpy).toHaveBeenCalledTimes(2);
  });

  it('does not take from another tenant: each has its own quota, * included', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h,*=1/h' });
    expect((await start(app, ACME, newKey())).statusCode).toBe(503);
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
    // beta falls under *, with a quota of its own; free as well.
    const beta = await start(app, BETA, newKey());
    expectProblem(beta, 503, 'engine_unavailable');
    expect(beta.headers['ratelimit-policy']).toBe('"tenant";q=1;w=3600');
    expectProblem(await start(app, FREE, newKey()), 503, 'engine_unavailable');
    expectProblem(await start(app, BETA, newKey()), 429, 'rate_limited');
  });

  it('sends no RateLimit fields for a tenant without a limit, and never refuses it', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h,free=unlimited' });
    for (let i = 0; i < 3; i++) {
      const res = await start(app, FREE, newKey());
      expectProblem(res, 503, 'engine_unavailable');
      expect(res.headers).not.toHaveProperty('ratelimit');
      expect(res.headers).not.toHaveProperty('ratelimit-policy');
    }
  });

  it('counts only new operations: reads, lists, cancels and refused requests spend nothing', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h' });
    const auth = { authorization: `Bearer ${ACME}` };
    await app.inject({ url: '/v1/operations/x', headers: auth });
    await app.inject({ url: '/v1/operations', headers: auth });
    await app.inject({ method: 'POST', url: '/v1/operations/x/cancel', headers: auth });
    // Refused before admission: a bad key, a bad body.
    await app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth, 'idempotency-key': '' }, payload: payment });
    await app.inject({ method: 'POST', url: '/v1/payments', headers: { ...auth, 'idempotency-key': 'k' }, payload: {} });
    const res = await start(app, ACME, newKey());
    expectProblem(res, 503, 'engine_unavailable');
    expect(fieldItem(res, 'ratelimit').params.r).toBe(0);
  });

  it('is one quota across two API instances on one store file', async () => {
    const file = join(dir, 'shared-limits.db');
    const env = { RETRYSAFE_TENANT_LIMITS: 'acme=3/h', RETRYSAFE_LIMITS_DB: file };
    const [first, second] = [await appWith(env), await appWith(env)];
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) answers.push((await start(i % 2 === 0 ? first : second, ACME, newKey())).statusCode);
    expect(answers.filter((s) => s !== 429)).toHaveLength(3);
    expect(answers.slice(3)).toEqual([429, 429, 429, 429, 429]);
    expect(startSpy).toHaveBeenCalledTimes(3);
    // Concurrently too: the count is one statement in the shared file, whichever instance runs it.
    const other = { RETRYSAFE_TENANT_LIMITS: 'beta=5/h', RETRYSAFE_LIMITS_DB: file };
    const [third, fourth] = [await appWith(other), await appWith(other)];
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => start(i % 2 ? third : fourth, BETA, newKey())));
    expect(burst.filter((r) => r.statusCode !== 429)).toHaveLength(5);
  });

  it('is refused before its body is read, and without any engine call', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h' });
    expectProblem(await start(app, ACME, newKey()), 503, 'engine_unavailable');
    startSpy.mockClear();
    handleSpy.mockClear();
    // Over its rate, a request whose body would be refused (not JSON, not even JSON's media
    // type) is refused for its rate: the body was never looked at.
    for (const [type, payload] of [
      ['application/json', '{"amount": '],
      ['text/plain', 'hello'],
      ['application/json', JSON.stringify({ ...payment, amount: '12' })],
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/payments',
        headers: { authorization: `Bearer ${ACME}`, 'idempotency-key': newKey(), 'content-type': type! },
        payload,
      });
      expectProblem(res, 429, 'rate_limited');
    }
    expect(startSpy).not.toHaveBeenCalled();
    expect(handleSpy).not.toHaveBeenCalled();
  });

  it('gives the unit back when the request then starts nothing (its body refused)', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=2/h' });
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${ACME}`, 'idempotency-key': newKey() },
      payload: { ...payment, amount: -1 },
    });
    expectProblem(bad, 400, 'invalid_request');
    expect(fieldItem(bad, 'ratelimit').params.r).toBe(1);
    await expect
      .poll(async () => fieldItem(await start(app, ACME, newKey()), 'ratelimit').params.r, { interval: 20 })
      .toBeLessThanOrEqual(1);
  });

  it('counts on its own, at once and without blocking, while another connection holds the store file', async () => {
    const file = join(dir, 'locked-limits.db');
    const app = await appWith({
      RETRYSAFE_TENANT_LIMITS: 'acme=1/h,beta=1/h',
      RETRYSAFE_LIMITS_DB: file,
      RETRYSAFE_LIMITS_TIMEOUT: '100ms',
    });
    expectProblem(await start(app, ACME, newKey()), 503, 'engine_unavailable');
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      // beta's first: the store cannot answer, so this instance counts beta on its own.
      const began = performance.now();
      const [res, health] = await Promise.all([start(app, BETA, newKey()), app.inject({ url: '/healthz' })]);
      expect(health.statusCode).toBe(200);
      expectProblem(res, 503, 'engine_unavailable');
      expect(fieldItem(res, 'ratelimit').params.r).toBe(0);
      expect(performance.now() - began).toBeLessThan(1_000);
      expectProblem(await start(app, BETA, newKey()), 429, 'rate_limited');
      // acme's window is known spent here: still refused.
      expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
  });
});

describe('reads, lists and cancels', () => {
  it('are bounded per tenant (100 a second by default), with the RateLimit fields of policy "reads"', async () => {
    const app = await appWith({});
    const auth = { authorization: `Bearer ${ACME}` };
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        app.inject(
          i % 3 === 0
            ? { url: `/v1/operations/k${i}`, headers: auth }
            : i % 3 === 1
              ? { url: '/v1/operations', headers: auth }
              : { method: 'POST', url: `/v1/operations/k${i}/cancel`, headers: auth },
        ),
      ),
    );
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(answers.filter((r) => r.statusCode !== 429).every((r) => r.statusCode === 503)).toBe(true);
    const body = expectProblem(refused[0]!, 429, 'rate_limited');
    expect(body.detail).toMatch(
      /^tenant acme is over its limit of 100 reads, lists and cancels per second at this API instance; retry in 1 s$/,
    );
    expect(refused[0]!.headers['retry-after']).toBe('1');
    expect(fieldItem(refused[0]!, 'ratelimit-policy')).toEqual({ name: 'reads', params: { q: 100, w: 1 } });
    // Another tenant's reads are its own, and new operations are not reads.
    expect((await app.inject({ url: '/v1/operations/x', headers: { authorization: `Bearer ${BETA}` } })).statusCode).toBe(503);
    expectProblem(await start(app, ACME, newKey()), 503, 'engine_unavailable');
  });

  it('follow RETRYSAFE_TENANT_READ_LIMITS', async () => {
    const app = await appWith({ RETRYSAFE_TENANT_READ_LIMITS: 'acme=2/m,*=unlimited' });
    const read = (secret: string) => app.inject({ url: '/v1/operations/x', headers: { authorization: `Bearer ${secret}` } });
    expect([(await read(ACME)).statusCode, (await read(ACME)).statusCode, (await read(ACME)).statusCode]).toEqual([
      503, 503, 429,
    ]);
    for (let i = 0; i < 60; i++) expect((await read(BETA)).statusCode).toBe(503);
  });
});

describe('the rate windows file', () => {
  it('cannot be opened: the instance starts all the same, counting on its own, and says so', async () => {
    const registry = new Registry();
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h', RETRYSAFE_LIMITS_DB: dir }, registry);
    expect(await registry.getSingleMetric('retrysafe_rate_windows_shared')?.get()).toMatchObject({ values: [{ value: 0 }] });
    expectProblem(await start(app, ACME, newKey()), 503, 'engine_unavailable');
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
  });

  it('is not opened (nor created) when no tenant is limited', async () => {
    const file = join(dir, 'never', 'limits.db');
    await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=unlimited', RETRYSAFE_LIMITS_DB: file });
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});

describe('Temporal answering RESOURCE_EXHAUSTED', () => {
  it('is 503 engine_busy with Retry-After, not engine_unavailable', () => {
    const grpc = Object.assign(new Error('8 RESOURCE_EXHAUSTED: namespace rate limit exceeded'), {
      code: 8,
      details: 'namespace rate limit exceeded',
      metadata: {},
    });
    const problem = toProblem(new Error('start failed', { cause: grpc }));
    expect(problem).toMatchObject({ status: 503, code: 'engine_busy', headers: { 'retry-after': '1' } });
    expect(problem.detail).toMatch(/refused the call as overloaded/);
    const unavailable = toProblem(Object.assign(new Error('14 UNAVAILABLE'), { code: 14, details: 'x', metadata: {} }));
    expect(unavailable.code).toBe('engine_unavailable');
  });
});
