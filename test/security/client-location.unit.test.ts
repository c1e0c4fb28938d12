// The client library follows a 202's Location only on the API's own origin: a Location that
// names another origin (another host, port or scheme; a proxy's rewrite or an answer
// tampered with) is never contacted, so the API key never leaves for it; the client polls
// the operation's own path on its base URL instead. A Location on its own origin is followed
// as it is. Two scripted APIs on loopback, on different ports: two origins.
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/lib/index.js';
import { DEFAULT_RETRY } from '../../client/lib/retry.js';
import { Transport } from '../../client/lib/transport.js';
import { operation, useScriptedApi } from '../client/scripted-api.js';

const api = useScriptedApi();
const elsewhere = useScriptedApi();
const KEY = 'sk_client_location_0123456789';

function client() {
  let clock = 1_000_000;
  return createClient({
    baseUrl: api.url,
    apiKey: KEY,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    random: () => 1,
  });
}

const request = { account: 'acc_alice', amount: 100, currency: 'EUR' };

describe('a 202 whose Location names', () => {
  it.each([
    ['another port on the same host', () => `${elsewhere.url}/v1/operations/k-1`],
    ['another scheme', () => `${api.url.replace('http:', 'https:')}/v1/operations/k-1`],
    ['another host', () => 'http://api.evil.example/v1/operations/k-1'],
    ['a protocol-relative URL elsewhere', () => `//${new URL(elsewhere.url).host}/v1/operations/k-1`],
  ])("%s: is not contacted; the client polls the operation's own path, with its key", async (_name, location) => {
    api.script = [
      { status: 202, body: operation('k-1', 'processing'), headers: { location: location(), 'retry-after': '1' } },
      { status: 200, body: operation('k-1', 'succeeded') },
    ];
    const result = await client().payments.create(request, { idempotencyKey: 'k-1' });
    expect(result.status).toBe('succeeded');
    expect(elsewhere.seen).toEqual([]);
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/payments', 'GET /v1/operations/k-1']);
    expect(api.seen.map((s) => s.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });

  it('its own origin: is followed as it is, with the key', async () => {
    api.script = [
      { status: 202, body: operation('k-2', 'processing'), headers: { location: `${api.url}/v1/operations/k-2?poll=1` } },
      { status: 200, body: operation('k-2', 'succeeded') },
    ];
    expect((await client().payments.create(request, { idempotencyKey: 'k-2' })).status).toBe('succeeded');
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/payments', 'GET /v1/operations/k-2?poll=1']);
    expect(api.seen[1]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(elsewhere.seen).toEqual([]);
  });
});

describe('the transport', () => {
  it("sends the API key to the base URL's origin only, whatever URL it is handed", async () => {
    const transport = new Transport({
      baseUrl: api.url,
      apiKey: KEY,
      requestTimeoutMs: 5_000,
      maxWaitSeconds: 0,
      policy: DEFAULT_RETRY,
      fetch,
      sleep: async () => undefined,
      random: () => 1,
      now: () => Date.now(),
    });
    api.script = [{ status: 200, body: {} }];
    elsewhere.script = [{ status: 200, body: {} }];
    const ctx = () => ({ key: undefined, deadline: Date.now() + 10_000, signal: undefined, requests: 0 });
    await transport.request(ctx(), 'GET', `${elsewhere.url}/v1/operations/k`);
    await transport.request(ctx(), 'GET', '/v1/operations/k');
    expect(elsewhere.seen).toHaveLength(1);
    expect(elsewhere.seen[0]?.headers.authorization).toBeUndefined();
    expect(api.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
