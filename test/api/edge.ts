// The API (buildApp) against a Temporal client whose server does not exist, for the suites
// of the HTTP edge (app-*.test.ts): every refusal must happen before any Temporal call,
// and the calls that do happen must turn into 503 engine_unavailable, never a 500. One app
// has API keys (tenants acme and beta), a 1 KiB body limit and its own metrics registry;
// the other runs in dev mode. A spy counts the workflow starts the edge let through.
import type { LightMyRequestResponse } from 'fastify';
import { Registry } from 'prom-client';
import { afterEach, expect, vi } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';
import { useForFile } from '../support/use-for-file.js';

export const ACME = 'sk_acme_0123456789abcdef';
export const BETA = 'sk_beta_0123456789abcdef';
export const auth = { authorization: `Bearer ${ACME}` };
export const payment = { account: 'acc_alice', amount: 1250, currency: 'EUR' };
export const checkout = { ...payment, items: [{ sku: 'sku_book', quantity: 2 }] };

export interface EdgeApps {
  /** With API keys, a 1 KiB body limit and `registry`. */
  app: App;
  /** Dev mode: no API keys. */
  devApp: App;
  registry: Registry;
  /** Workflow starts the edge let through (reset after each test). */
  startSpy: ReturnType<typeof vi.spyOn>;
  /** A POST to `app` (or `target`), by default as acme with the key `order-42`. */
  post(
    path: string,
    opts?: { headers?: Record<string, string>; payload?: unknown; target?: App },
  ): Promise<LightMyRequestResponse>;
}

/** The apps for the file that calls this: built in its beforeAll, closed in its afterAll. */
export function useEdgeApps(): EdgeApps {
  const edge = useForFile('the edge apps', buildEdgeApps, async ({ app, devApp, engine }) => {
    await Promise.all([app.close(), devApp.close()]);
    await engine.close();
  });
  afterEach(() => {
    edge.startSpy.mockClear();
  });
  return edge;
}

async function buildEdgeApps(): Promise<EdgeApps & { engine: DeadEngine }> {
  const engine = deadEngine();
  const { client } = engine;
  const startSpy = vi.spyOn(client.workflow, 'start');
  const registry = new Registry();
  const config = loadApiConfig({
    RETRYSAFE_API_KEYS: `${ACME}=acme,${BETA}=beta`,
    RETRYSAFE_BODY_LIMIT: '1024',
    RETRYSAFE_ENGINE_TIMEOUT: '300ms',
    LOG_LEVEL: 'silent',
  });
  const app = buildApp({ config, client, namespace: 'default', registry });
  const devApp = buildApp({
    config: loadApiConfig({ RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'silent' }),
    client,
    namespace: 'default',
  });
  await Promise.all([app.ready(), devApp.ready()]);
  return {
    engine,
    app,
    devApp,
    registry,
    startSpy,
    post: (path, opts = {}) =>
      (opts.target ?? app).inject({
        method: 'POST',
        url: path,
        headers: opts.headers ?? { ...auth, 'idempotency-key': 'order-42' },
        ...(opts.payload === undefined ? {} : { payload: opts.payload as object }),
      }),
  };
}

/** A problem details answer of this status and code, with the fields every problem has. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code, type: `urn:retrysafe:problem:${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body as {
    title: string;
    detail: string;
    errors?: { field: string; message: string }[];
    differences?: string[];
    instance?: string;
  };
}
