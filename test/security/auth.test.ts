// API keys and tenants over real HTTP, with the real stack behind: every route but
// liveness and readiness needs a key (wrong keys of any length are refused alike), and a
// tenant can neither read, list nor collide with another tenant's operations, even with
// the same Idempotency-Key, a path that tries to climb out of its scope, or a cursor
// issued to someone else. Every answer is free of stack traces, paths and host names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import {
  Contract,
  documentedRoute,
  leakIn,
  problemViolations,
  rawRequest,
  startTestApi,
  type RawAnswer,
  type TestApi,
} from '../hostile/support.js';

// Distinct lengths on purpose: a wrong key is refused whether or not its length matches.
const ACME = `sk_acme_${uniqueId('a')}_0123456789`;
const ACME_ROTATED = `sk_acme_next_${uniqueId('b')}_abcdefghijklmnopqrstuvwxyz`;
const UMBRELLA = `sk_umbrella_${uniqueId('c')}_0123456789abcdef0123456789abcdef`;
const BETA = `sk_beta_${uniqueId('d')}_0123456789`;
const tenants = { acme: uniqueId('acme'), umbrella: uniqueId('umbrella'), beta: uniqueId('beta') };

// The suite builds its own APIs: one with four keys, one in dev mode, spoken to over raw sockets.
const stack = useFullStack({ name: 'security', reservations: false, faults: false, api: 'none' });
let api: TestApi;
let devApi: TestApi;
let contract: Contract;
const account = uniqueId('acc');
const OPENING = 1_000_000;

beforeAll(async () => {
  await stack.bank.openAccount(account, OPENING);
  api = await startTestApi({
    env: {
      RETRYSAFE_TASK_QUEUE: stack.taskQueue,
      RETRYSAFE_API_KEYS: `${ACME}=${tenants.acme},${UMBRELLA}=${tenants.umbrella},${ACME_ROTATED}=${tenants.acme},${BETA}=${tenants.beta}`,
    },
  });
  // Dev mode (no keys) needs no engine for what is asked of it here.
  devApi = await startTestApi({ env: {}, temporalAddress: '127.0.0.1:1', lazy: true });
  contract = await Contract.load(api.url, `Bearer ${ACME}`);
});

afterAll(async () => {
  await Promise.all([api?.close(), devApi?.close()]);
});

async function call(
  method: string,
  path: string,
  authorization: string | undefined,
  extra: { headers?: Array<[string, string]>; body?: string; port?: number } = {},
): Promise<RawAnswer> {
  const result = await rawRequest(extra.port ?? api.port, {
    method,
    path,
    headers: [
      ...(authorization === undefined ? [] : [['Authorization', authorization] as [string, string]]),
      ...(extra.headers ?? []),
    ],
    body: extra.body,
  });
  if (result.closed) throw new Error(`${method} ${path}: closed without an answer`);
  expect(result.status, `${method} ${path}: ${result.body.slice(0, 300)}`).toBeLessThan(500);
  expect(leakIn(result.body, [path]), `${method} ${path}`).toBeUndefined();
  const route = documentedRoute(path, method);
  if (route && method !== 'HEAD') expect(contract.violations(method, route, result), `${method} ${path}`).toEqual([]);
  return result;
}

const bearer = (secret: string) => `Bearer ${secret}`;
const startHeaders = (key: string): Array<[string, string]> => [
  ['Content-Type', 'application/json'],
  ['Idempotency-Key', key],
  ['Prefer', 'wait=20'],
];

function pay(secret: string, key: string, amount: number) {
  return call('POST', '/v1/payments', bearer(secret), {
    headers: startHeaders(key),
    body: JSON.stringify({ account, amount, currency: 'EUR' }),
  });
}

describe('API keys', () => {
  /** Every route the app serves, with a sample path, the Swagger UI's included. */
  function routes(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const [path, ops] of Object.entries(contract.doc.paths)) {
      for (const method of Object.keys(ops)) out.push([method.toUpperCase(), path.replace('{key}', 'order-42')]);
    }
    out.push(['GET', '/docs'], ['GET', '/docs/json'], ['GET', '/docs/static/index.html'], ['GET', '/v1/operations/a/b']);
    for (const [method, path] of [...out]) if (method === 'GET') out.push(['HEAD', path]);
    return out;
  }
  const open = new Set(['/healthz', '/readyz']);

  it('the document lists the routes this test walks', () => {
    expect(Object.keys(contract.doc.paths).sort()).toEqual(
      [
        '/healthz',
        '/metrics',
        '/openapi.json',
        '/readyz',
        '/v1/checkouts',
        '/v1/operations',
        '/v1/operations/{key}',
        '/v1/operations/{key}/cancel',
        '/v1/payments',
        '/v1/transfers',
      ].sort(),
    );
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty bearer token', 'Bearer '],
    ['a wrong key of the same length', bearer(ACME.replace(/.$/, (c) => (c === '0' ? '1' : '0')))],
    ['a wrong key of another length', bearer('sk_nobody_0123456789abcdef')],
    ['a prefix of a real key', bearer(ACME.slice(0, -1))],
    ['a real key with a character appended', bearer(`${ACME}x`)],
    ['a real key in another case', bearer(ACME.toUpperCase())],
    ['a real key under another scheme', `Basic ${ACME}`],
    ['a real key with no scheme', ACME],
    ['two tokens', `Bearer ${ACME} ${ACME}`],
    ['a key of 4 KiB', bearer('k'.repeat(4096))],
  ])('refuses %s on every route but /healthz and /readyz', async (_name, authorization) => {
    for (const [method, path] of routes()) {
      const bare = path.split('?')[0]!;
      // /metrics is the operators': a scrape from this machine (as here) needs no key.
      const isOpen = open.has(bare) || (bare === '/metrics' && authorization === undefined);
      const answer = await call(
        method,
        path,
        authorization,
        method === 'POST' ? { headers: startHeaders(uniqueId('refused')), body: '{}' } : {},
      );
      if (isOpen) {
        expect(answer.status, `${method} ${path}`).toBe(200);
        continue;
      }
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      if (method !== 'HEAD') {
        expect(answer.json?.code).toBe('unauthorized');
        expect(problemViolations(answer)).toEqual([]);
      }
    }
  });

  it('lets every route through with a valid key, including a rotated one', async () => {
    for (const secret of [ACME, ACME_ROTATED]) {
      for (const [method, path] of routes()) {
        const answer = await call(
          method,
          path,
          bearer(secret),
          method === 'POST' ? { headers: startHeaders(uniqueId('ok')), body: '{}' } : {},
        );
        expect(answer.status, `${method} ${path}`).not.toBe(401);
      }
    }
  });

  it('in dev mode (no keys configured) leaves every route open, as documented', async () => {
    for (const path of ['/metrics', '/openapi.json', '/docs', '/healthz']) {
      const result = await rawRequest(devApi.port, { method: 'GET', path });
      expect(result.closed ? 0 : result.status, path).toBe(200);
    }
  });

  it('refused requests started nothing and charged nothing', async () => {
    expect(await stack.bank.balance(account)).toBe(OPENING - charged);
  });
});

let charged = 0;

describe('tenant isolation', () => {
  it('the same key in two tenants is two operations and two charges', async () => {
    const key = uniqueId('shared');
    const [a, u] = await Promise.all([pay(ACME, key, 300), pay(UMBRELLA, key, 300)]);
    charged += 600;
    for (const answer of [a, u]) {
      expect(answer.status, answer.body).toBe(200);
      expect(answer.json).toMatchObject({ key, status: 'succeeded' });
      expect(answer.headers['idempotent-replayed']).toBeUndefined();
    }
    const chargeA = await stack.bank.charge(`${tenants.acme}/${key}/charge`);
    const chargeU = await stack.bank.charge(`${tenants.umbrella}/${key}/charge`);
    expect(chargeA.body).toMatchObject({ status: 'captured', amount: 300 });
    expect(chargeU.body).toMatchObject({ status: 'captured', amount: 300 });
    expect((a.json?.result as Record<string, string>).chargeId).toBe(chargeA.body.chargeId);
    expect((u.json?.result as Record<string, string>).chargeId).toBe(chargeU.body.chargeId);
    expect(chargeA.body.chargeId).not.toBe(chargeU.body.chargeId);
    expect(await stack.bank.balance(account)).toBe(OPENING - charged);
  });

  it('a key another tenant used with another amount is not a 422 (no collision), and each reads its own', async () => {
    const key = uniqueId('collide');
    const a = await pay(ACME, key, 111);
    const u = await pay(UMBRELLA, key, 222);
    charged += 333;
    expect([a.status, u.status]).toEqual([200, 200]);
    const readA = await call('GET', `/v1/operations/${key}`, bearer(ACME));
    const readU = await call('GET', `/v1/operations/${key}`, bearer(UMBRELLA));
    expect(readA.json?.result).toEqual(a.json?.result);
    expect(readU.json?.result).toEqual(u.json?.result);
    expect(readA.json?.result).not.toEqual(readU.json?.result);
    // A rotated key of the same tenant reads the same operation; a retry through it replays.
    expect((await call('GET', `/v1/operations/${key}`, bearer(ACME_ROTATED))).json).toEqual(readA.json);
    const retry = await pay(ACME_ROTATED, key, 111);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await stack.bank.balance(account)).toBe(OPENING - charged);
  });

  it("cannot read another tenant's operation, not even by climbing out of its scope in the path", async () => {
    const key = uniqueId('private');
    expect((await pay(UMBRELLA, key, 5)).status).toBe(200);
    charged += 5;
    for (const path of [
      `/v1/operations/${key}`,
      `/v1/operations/..%2F${tenants.umbrella}%2F${key}`,
      `/v1/operations/../${tenants.umbrella}/${key}`,
      `/v1/operations/%2E%2E/${tenants.umbrella}/${key}`,
      `/v1/operations/${encodeURIComponent(`${tenants.umbrella}/${key}`)}`,
      `/v1/operations/${tenants.umbrella}/${key}`,
      `/v1/operations/%00${key}`,
    ]) {
      for (const secret of [ACME, BETA]) {
        const answer = await call('GET', path, bearer(secret));
        expect([400, 404], `${path}: ${answer.body}`).toContain(answer.status);
        expect(answer.body).not.toContain('"succeeded"');
      }
    }
    // A key that looks like another tenant's workflow ID is just a key of this tenant.
    const lookalike = `${tenants.umbrella}/${key}`;
    const mine = await pay(ACME, lookalike, 6);
    charged += 6;
    expect(mine.status).toBe(200);
    expect(mine.headers['idempotent-replayed']).toBeUndefined();
    expect((await stack.bank.charge(`${tenants.acme}/${lookalike}/charge`)).body).toMatchObject({ amount: 6 });
    expect((await stack.bank.charge(`${tenants.umbrella}/${key}/charge`)).body).toMatchObject({ amount: 5 });
  });

  it("lists only the caller's operations, and a cursor works only for the tenant it was issued to", async () => {
    const onlyAcme = uniqueId('only-acme');
    await pay(ACME, onlyAcme, 1);
    charged += 1;
    // Visibility is eventually consistent: wait until acme sees its own operation.
    let acmeKeys: string[] = [];
    for (let i = 0; i < 60 && !acmeKeys.includes(onlyAcme); i++) {
      const list = await call('GET', '/v1/operations?limit=100', bearer(ACME));
      acmeKeys = (list.json?.operations as Array<{ key: string }>).map((o) => o.key);
      if (!acmeKeys.includes(onlyAcme)) await new Promise((r) => setTimeout(r, 250));
    }
    expect(acmeKeys).toContain(onlyAcme);
    const umbrellaKeys = (
      (await call('GET', '/v1/operations?limit=100', bearer(UMBRELLA))).json?.operations as Array<{ key: string }>
    ).map((o) => o.key);
    expect(umbrellaKeys).not.toContain(onlyAcme);
    expect(umbrellaKeys.length).toBeGreaterThan(0);
    const betaList = await call('GET', '/v1/operations', bearer(BETA));
    expect(betaList.json?.operations).toEqual([]);

    const page = await call('GET', '/v1/operations?limit=1', bearer(ACME));
    const cursor = page.json?.nextCursor as string;
    expect(typeof cursor).toBe('string');
    expect((await call('GET', `/v1/operations?limit=1&cursor=${cursor}`, bearer(ACME))).status).toBe(200);
    const stolen = await call('GET', `/v1/operations?limit=1&cursor=${cursor}`, bearer(UMBRELLA));
    expect(stolen.status).toBe(400);
    expect(stolen.json?.code).toBe('invalid_request');
    expect(await stack.bank.balance(account)).toBe(OPENING - charged);
  });
});
