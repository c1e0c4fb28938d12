// /metrics is the operators' view of the whole platform, not a tenant's: a tenant's API key
// is refused (403) from anywhere; a scrape from this machine needs no key; one from another
// machine needs RETRYSAFE_METRICS_TOKEN as its bearer, and without a token configured is
// refused whatever it sends. The metrics say whether the API runs in dev mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';
import { expectProblem } from '../api/edge.js';

const ACME = 'sk_acme_metrics_0123456789';
const TOKEN = 'mt_operator_0123456789abcdef';
const REMOTE = '203.0.113.7';

let engine: DeadEngine;
let withToken: App;
let withoutToken: App;
let devApp: App;

beforeAll(async () => {
  engine = deadEngine();
  const base = { RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'silent' };
  const app = (env: Record<string, string>) =>
    buildApp({ config: loadApiConfig({ ...base, ...env }), client: engine.client, namespace: 'default' });
  withToken = app({ RETRYSAFE_API_KEYS: `${ACME}=acme`, RETRYSAFE_METRICS_TOKEN: TOKEN });
  withoutToken = app({ RETRYSAFE_API_KEYS: `${ACME}=acme` });
  devApp = app({});
  await Promise.all([withToken.ready(), withoutToken.ready(), devApp.ready()]);
});
afterAll(async () => {
  await Promise.all([withToken.close(), withoutToken.close(), devApp.close()]);
  await engine.close();
});

const scrape = (app: App, from: string, authorization?: string) =>
  app.inject({ url: '/metrics', remoteAddress: from, ...(authorization ? { headers: { authorization } } : {}) });

describe('/metrics', () => {
  it("refuses a tenant's API key with 403, from this machine and from another", async () => {
    for (const from of ['127.0.0.1', '::1', REMOTE]) {
      const res = await scrape(withToken, from, `Bearer ${ACME}`);
      expectProblem(res, 403, 'forbidden');
      expect(res.body).not.toContain('retrysafe_');
    }
  });

  it('answers a scrape from this machine without a key', async () => {
    for (const from of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      const res = await scrape(withToken, from);
      expect(res.statusCode, from).toBe(200);
      expect(res.body).toContain('# TYPE retrysafe_api_dev_mode gauge');
    }
  });

  it('answers a remote scrape only with the metrics token as its bearer', async () => {
    expect((await scrape(withToken, REMOTE, `Bearer ${TOKEN}`)).statusCode).toBe(200);
    expect((await scrape(withToken, REMOTE, `bearer  ${TOKEN} `)).statusCode).toBe(200);
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN]) {
      const res = await scrape(withToken, REMOTE, authorization);
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    // From this machine, a wrong bearer is still a wrong bearer.
    expectProblem(await scrape(withToken, '127.0.0.1', `Bearer ${TOKEN}x`), 401, 'unauthorized');
  });

  it('without a token configured, refuses every remote scrape', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}`, `Bearer ${ACME}`]) {
      const res = await scrape(withoutToken, REMOTE, authorization);
      expect(res.statusCode).toBe(authorization?.includes(ACME) ? 403 : 401);
    }
    expect((await scrape(withoutToken, '127.0.0.1')).statusCode).toBe(200);
  });

  it('in dev mode: answers this machine, refuses a remote scrape without the token, and says dev mode', async () => {
    const local = await scrape(devApp, '127.0.0.1');
    expect(local.statusCode).toBe(200);
    expect(local.body).toMatch(/^retrysafe_api_dev_mode 1$/m);
    expectProblem(await scrape(devApp, REMOTE), 401, 'unauthorized');
    expect((await scrape(withToken, '127.0.0.1')).body).toMatch(/^retrysafe_api_dev_mode 0$/m);
  });

  it('leaves the tenant routes as they were: a tenant key works there, and no key is refused even from this machine', async () => {
    expectProblem(await withToken.inject({ url: '/v1/operations', remoteAddress: '127.0.0.1' }), 401, 'unauthorized');
    expectProblem(
      await withToken.inject({
        url: '/v1/operations',
        remoteAddress: '127.0.0.1',
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
      401,
      'unauthorized',
    );
    const res = await withToken.inject({ url: '/v1/operations', headers: { authorization: `Bearer ${ACME}` } });
    expect(res.statusCode).toBe(503);
  });
});
