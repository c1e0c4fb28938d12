// The HTTP API on a real port (127.0.0.1:0) against the shared dev server, configured
// through the same environment parsing as production, and a small fetch-based caller that
// speaks to an API wherever it runs (here, or as a process: full-stack.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { Registry } from 'prom-client';
import { expect, inject } from 'vitest';
import { buildApp } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { createLogger } from '../../common/logger.js';

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface ApiClient {
  url: string;
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<ApiAnswer>;
  /** Polls GET /v1/operations/{key} until the operation is terminal. */
  waitTerminal(key: string, authorization?: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface ApiHandle extends ApiClient {
  registry: Registry;
}

/**
 * The suites' APIs keep a fixed in-flight limit (its floor at its ceiling, 64): their
 * latencies measure a test machine running other suites, not an engine, and a limit that
 * followed them would refuse a suite's burst at random. The adaptive limit has suites of
 * its own (in-flight-limit.unit.test.ts, admission-stack.test.ts), which set their own.
 */
export const FIXED_IN_FLIGHT = { RETRYSAFE_IN_FLIGHT_FLOOR: '64' };

/** The API on 127.0.0.1:`port`, or on a free port (a test that restarts it where a client expects it gives the port). */
export async function startApi(opts: {
  taskQueue: string;
  port?: number;
  apiKeys?: string;
  stepDeadlineMs?: number;
  attentionAfterMs?: number;
  /** RETRYSAFE_SETTINGS: values of the definitions' settings (`checkout.holdTtlSeconds=1`). */
  settings?: string;
  env?: Record<string, string>;
}): Promise<ApiHandle> {
  const config = loadApiConfig({
    API_PORT: String(opts.port ?? 0),
    RETRYSAFE_TASK_QUEUE: opts.taskQueue,
    RETRYSAFE_API_KEYS: opts.apiKeys,
    RETRYSAFE_STEP_DEADLINE: String(opts.stepDeadlineMs ?? 20_000),
    RETRYSAFE_ATTENTION_AFTER: String(opts.attentionAfterMs ?? 300_000),
    RETRYSAFE_SETTINGS: opts.settings,
    TEMPORAL_UI_URL: inject('temporalUiUrl') || 'http://localhost:8233',
    LOG_LEVEL: 'silent',
    ...FIXED_IN_FLIGHT,
    ...opts.env,
  });
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  const client = new Client({ connection, namespace: 'default' });
  const registry = new Registry();
  const app = buildApp({ config, client, namespace: 'default', registry, logger: createLogger('api', { level: 'silent' }) });
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const api = apiClient(url, async () => {
    await app.close();
    await connection.close();
  });
  return { ...api, registry };
}

/** Calls the API at `url`; `close` is what stops it. */
export function apiClient(url: string, close: () => Promise<void>): ApiClient {
  const request: ApiClient['request'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { text };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };

  return {
    url,
    request,
    async waitTerminal(key, authorization, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await request('GET', `/v1/operations/${encodeURIComponent(key)}`, {
          headers: authorization ? { authorization } : {},
        });
        if (res.status === 200 && res.body.status !== 'processing') return res.body;
        if (Date.now() > deadline) throw new Error(`operation ${key} still ${String(res.body.status ?? res.status)}`);
        await sleep(250);
      }
    },
    close,
  };
}

/**
 * A 200 carrying a succeeded operation of this type and key, each step completed under the
 * downstream key given (in order), the last one its current step.
 */
export function expectSucceeded(res: ApiAnswer, type: string, key: string, steps: Array<[name: string, downstreamKey: string]>) {
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    key,
    type,
    status: 'succeeded',
    step: steps.at(-1)?.[0],
    steps: steps.map(([name, downstreamKey]) => ({ name, status: 'completed', downstreamKey })),
  });
}

/**
 * A failed operation: its error code, the compensations that ran (in order), and each step's
 * status in step order, as `name:status` words (`debit_source:compensated credit_destination:failed`).
 */
export function expectFailedOperation(operation: Record<string, unknown>, code: string, compensations: string[], steps: string) {
  expect(operation).toMatchObject({ status: 'failed', error: { code, compensations } });
  const statuses = (operation.steps as Array<{ name: string; status: string }>).map((s) => `${s.name}:${s.status}`);
  expect(statuses.join(' ')).toBe(steps);
}

/** The same request again: the first answer, replayed as it was, and marked so. */
export function expectReplayed(again: ApiAnswer, first: ApiAnswer) {
  expect(again.status).toBe(first.status);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toEqual(first.body);
}
