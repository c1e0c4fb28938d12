// Admission of new operations at the HTTP edge, against a Temporal client whose server
// does not exist: a request that is admitted goes on to the engine and answers 503
// engine_unavailable, a refused one answers 429 without a start call. So what is decided
// here is decided before the engine, which is what admission is. The engine bound and the
// replays that pass a limit need operations that exist: admission-stack.test.ts.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { Registry } from 'prom-client';
import { parseList } from 'structured-headers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { InFlight, tenantShare } from '../../client/api/admission/in-flight.js';
import { loadApiConfig } from '../../client/api/config.js';
import { toProblem } from '../../client/api/error-handler.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';
import { problemsOf } from '../support/config-problems.js';
import { ACME, BETA, expectProblem, payment } from './edge.js';

const FREE = 'sk_free_0123456789abcdef';
const KEYS = `${ACME}=acme,${BETA}=beta,${FREE}=free`;

let engine: DeadEngine;
let dir: string;
const apps: App[] = [];
let startSpy: ReturnType<typeof vi.spyOn>;
let n = 0;
const newKey = () => `admission-${process.pid}-${++n}`;

beforeAll(() => {
  engine = deadEngine();
  startSpy = vi.spyOn(engine.client.workflow, 'start');
  dir = mkdtempSync(join(tmpdir(), 'admission-'));
});

afterEach(() => {
  startSpy.mockClear();
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
    expect(body.title).toBe('This tenant is over its limit of new operations; retry with the same key');
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

  it('admits without a limit, and logs, when the store cannot be written within its busy timeout', async () => {
    const file = join(dir, 'locked-limits.db');
    const app = await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=1/h', RETRYSAFE_LIMITS_DB: file });
    expectProblem(await start(app, ACME, newKey()), 503, 'engine_unavailable');
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      const res = await start(app, ACME, newKey());
      expectProblem(res, 503, 'engine_unavailable');
      expect(res.headers).not.toHaveProperty('ratelimit');
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expectProblem(await start(app, ACME, newKey()), 429, 'rate_limited');
  });
});

describe('the rate windows file', () => {
  it('stops the instance at start-up, naming RETRYSAFE_LIMITS_DB, when it cannot be opened', () => {
    const config = loadApiConfig({ RETRYSAFE_TENANT_LIMITS: '*=5/s', RETRYSAFE_LIMITS_DB: dir, LOG_LEVEL: 'silent' });
    const problems = problemsOf(() => buildApp({ config, client: engine.client, namespace: 'default' }));
    expect(problems[0]).toMatch(new RegExp(`^RETRYSAFE_LIMITS_DB="${dir}": cannot open it \\(`));
  });

  it('is not opened (nor created) when no tenant is limited', async () => {
    const file = join(dir, 'never', 'limits.db');
    await appWith({ RETRYSAFE_TENANT_LIMITS: 'acme=unlimited', RETRYSAFE_LIMITS_DB: file });
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});

describe('the engine bound', () => {
  it('takes distinct operations up to the bound; a second request for one in flight joins it', () => {
    const bound = new InFlight(2);
    const a = bound.enter('acme/a', 'acme')!;
    const b = bound.enter('beta/b', 'beta')!;
    expect(bound.enter('gamma/c', 'gamma')).toBeUndefined();
    expect(bound.join('gamma/c')).toBeUndefined();
    const again = bound.join('acme/a')!;
    expect(bound.size).toBe(2);
    a.release();
    a.release();
    // The joined request still holds acme/a.
    expect(bound.enter('gamma/c', 'gamma')).toBeUndefined();
    again.release();
    expect(bound.size).toBe(1);
    const c = bound.enter('gamma/c', 'gamma')!;
    expect(bound.size).toBe(2);
    b.release();
    c.release();
    expect(bound.size).toBe(0);
  });

  it('keeps a quarter of the places from any one tenant, so another finds one during a flood', () => {
    expect([1, 2, 4, 64, 100].map(tenantShare)).toEqual([1, 1, 3, 48, 75]);
    const bound = new InFlight(8);
    const acme = Array.from({ length: 6 }, (_, i) => bound.enter(`acme/${i}`, 'acme'));
    expect(acme.every((h) => h !== undefined)).toBe(true);
    expect(bound.enter('acme/6', 'acme')).toBeUndefined();
    // A retry of one of acme's operations is not a new one: it joins.
    expect(bound.enter('acme/0', 'acme')).toBeDefined();
    expect(bound.enter('beta/0', 'beta')).toBeDefined();
    expect(bound.enter('gamma/0', 'gamma')).toBeDefined();
    expect(bound.enter('delta/0', 'delta')).toBeUndefined();
    acme[5]!.release();
    expect(bound.enter('delta/0', 'delta')).toBeDefined();
    expect(bound.enter('acme/6', 'acme')).toBeUndefined();
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
