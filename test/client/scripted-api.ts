// A stand-in for the API on loopback, for the tests that isolate one client decision: it
// answers each request with the next scripted answer (or drops the connection) and keeps
// every request it saw. Real HTTP, so the client's own fetch, headers and parsing run.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Operation } from '../../client/lib/index.js';
import { listenOnFreePort } from '../support/loopback.js';

export type Scripted = { status: number; headers?: Record<string, string>; body?: unknown } | 'reset';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedApi {
  url: string;
  /** Answers still to give, in order; past the end the API answers 500. */
  script: Scripted[];
  seen: Seen[];
  /** Forgets the script and what was seen (between tests). */
  reset(): void;
  close(): Promise<void>;
}

/**
 * The scripted API for a test file: listening from beforeAll, closed in afterAll, its
 * script and what it saw forgotten before each test.
 */
export function useScriptedApi(): ScriptedApi {
  const api: ScriptedApi = {
    url: '',
    script: [],
    seen: [],
    reset() {
      api.script = [];
      api.seen = [];
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      api.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const next = api.script.shift() ?? { status: 500, body: { code: 'internal_error', detail: 'script ran out' } };
      if (next === 'reset') {
        req.socket.destroy();
        return;
      }
      const isProblem = next.status >= 400;
      res.writeHead(next.status, {
        'content-type': isProblem ? 'application/problem+json' : 'application/json',
        ...next.headers,
      });
      res.end(next.body === undefined ? '' : JSON.stringify(next.body));
    });
  });
  beforeAll(async () => {
    api.url = await listenOnFreePort(server);
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());
  return api;
}

export function operation(key: string, status: Operation['status'], extra: Partial<Operation> = {}): Operation {
  return {
    key,
    type: 'payment',
    status,
    step: 'charge_payment',
    createdAt: '2030-01-01T00:00:00.000Z',
    completedAt: status === 'processing' ? null : '2030-01-01T00:00:01.000Z',
    keyExpiresAt: status === 'processing' ? null : '2030-01-08T00:00:01.000Z',
    ...(status === 'succeeded' ? { result: { chargeId: 'ch_1' } } : {}),
    steps: [
      {
        name: 'charge_payment',
        status: status === 'processing' ? 'running' : 'completed',
        downstreamKey: `default/${key}/charge`,
      },
    ],
    needsAttention: false,
    cancelRequested: false,
    links: { self: `/v1/operations/${encodeURIComponent(key)}`, temporalUi: 'http://localhost:8233/x' },
    ...extra,
  };
}

/** A scripted problem-details answer. */
export const problem = (status: number, code: string, extra: Record<string, unknown> = {}) => ({
  status,
  body: { type: `urn:retrysafe:problem:${code}`, title: code, status, detail: `${code} detail`, code, ...extra },
});
