// A chaos client against a scripted API on loopback: refused for load (429, then 503
// engine_busy), or answered 408, it sends the same request again with the same key and its
// tenant's credentials, to the collection its definition names, and never sooner than
// Retry-After; a refusal that leaves out what the contract promises (Retry-After, the
// RateLimit fields) is a violation.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOperation } from '../../tools/chaos/client.js';
import { newClientStats, type ClientContext } from '../../tools/chaos/records.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { plannedOp } from './fixtures.js';

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body: Record<string, unknown>;
}

const received: Array<{ at: number; method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];
let script: Scripted[] = [];
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      received.push({ at: Date.now(), method: req.method, url: req.url, headers: req.headers, body });
      const next = script.shift() ?? { status: 500, body: { code: 'script_ended' } };
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers }).end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const op = plannedOp({
  key: 'flood-s1-0',
  tenant: 'flood',
  type: 'transfer',
  body: { from: 'acc_chaos_1', to: 'acc_chaos_2', amount: 700, currency: 'EUR' },
  prefer: 'wait=10',
  flood: true,
  clientSeed: 11,
});

function context(): ClientContext {
  return {
    apiUrls: [url, url],
    catalog: builtInCatalog,
    authorization: { flood: 'Bearer sk_flood_0123456789abcdef' },
    deadline: Date.now() + 30_000,
    stats: newClientStats(),
    violations: [],
  };
}

const rateLimited: Scripted = {
  status: 429,
  headers: { 'retry-after': '1', ratelimit: '"flood";r=0;t=1', 'ratelimit-policy': '"flood";q=5;w=1' },
  body: { code: 'rate_limited' },
};
const engineBusy: Scripted = { status: 503, headers: { 'retry-after': '1' }, body: { code: 'engine_busy' } };
const succeeded: Scripted = {
  status: 200,
  body: { key: op.key, type: 'transfer', status: 'succeeded', result: { debitId: 'ch_1', creditId: 'cr_1' } },
};

describe('a chaos client refused for load', () => {
  it('sends the same request again with the same key, no sooner than Retry-After, until it is answered', async () => {
    received.length = 0;
    script = [rateLimited, engineBusy, { status: 408, body: { code: 'request_timeout' } }, succeeded];
    const ctx = context();
    const rec = await runOperation(ctx, op);

    expect(ctx.violations).toEqual([]);
    expect(rec).toMatchObject({ accepted: true, timedOut: false, requests: 4 });
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(Array(4).fill('POST /v1/transfers'));
    for (const r of received) {
      expect(r.headers).toMatchObject({
        'idempotency-key': op.key,
        authorization: 'Bearer sk_flood_0123456789abcdef',
        prefer: 'wait=10',
      });
      expect(JSON.parse(r.body)).toEqual(op.body);
    }
    // Retry-After: 1 after the 429 and after the 503.
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(1_000);
    expect(received[2]!.at - received[1]!.at).toBeGreaterThanOrEqual(1_000);
    expect(ctx.stats.byTenant.flood).toEqual({ requests: 4, byStatus: { '200': 1, '408': 1, '429': 1, '503': 1 } });
    expect(ctx.stats.unavailableByTenant).toEqual({ flood: { engine_busy: 1 } });
    expect(ctx.stats.requestTimeouts).toBe(1);
  });

  it('reports a 429 without the RateLimit fields and a 503 without Retry-After, and still retries them', async () => {
    received.length = 0;
    script = [
      { status: 429, headers: { 'retry-after': '1' }, body: { code: 'rate_limited' } },
      { status: 503, body: { code: 'engine_busy' } },
      succeeded,
    ];
    const ctx = context();
    const rec = await runOperation(ctx, op);
    expect(rec.accepted).toBe(true);
    expect(ctx.violations).toEqual([
      expect.objectContaining({
        rule: 'API: 429 is rate_limited with Retry-After and RateLimit fields',
        message: 'api-0 answered 429 rate_limited without ratelimit, ratelimit-policy',
      }),
      expect.objectContaining({ rule: 'API: 503 carries Retry-After', message: expect.stringContaining('503 engine_busy') }),
    ]);
  });
});
