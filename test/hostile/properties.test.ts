// Property-based tests of the API's input handling, over real HTTP (a raw socket client,
// so any byte can be sent) against buildApp on a real port, the shared dev server, a
// worker, the sandbox bank and reservations. For every generated request:
//   - never a 5xx; the answer is one the OpenAPI document declares for that route and
//     status (media type, schema, headers); every error is a problem with a `code`;
//   - no stack frame, file path or host name in any answer;
//   - the status is the one the contract (test/hostile/oracle.ts) predicts: valid input
//     → 200/202, invalid → 400 with the right code.
// Then the effects are counted: one workflow execution per distinct accepted key and none
// for a refused request, and every operation passes the ledger audit (the system's invariants).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { auditOperation } from '../support/invariants.js';
import { uniqueId } from '../support/stack.js';
import { BIG, bigBody, bodyCase, contentType, type OpType } from './arbitraries/bodies.js';
import { KEY_POOL, keyHeader, preferCase } from './arbitraries/headers.js';
import { keyPathCase, queryCase } from './arbitraries/urls.js';
import { hasPoisonKeys, isValidBody, isValidListQuery, judgeKey, judgePrefer, PARSER_REFUSED_BYTES } from './oracle.js';
import { Contract, counter, documentedRoute, leakIn, rawRequest, startTestApi, type RawAnswer, type TestApi } from './support.js';

const SEED = 20_260_501;
const RUNS = { keys: 250, bodies: 300, prefer: 150, list: 150, paths: 200 };
const BODY_LIMIT = 65_536;

interface Accepted {
  type: OpType;
  amount: number;
  account: string;
}

interface Tenant {
  name: string;
  secret: string;
  accepted: Map<string, Accepted>;
}

const makeTenant = (prefix: string): Tenant => ({
  name: uniqueId(prefix),
  secret: `sk_${uniqueId(prefix)}_0123456789`,
  accepted: new Map(),
});
const tenants = { keys: makeTenant('keys'), bodies: makeTenant('bodies'), prefer: makeTenant('prefer') };

// The suite builds its own API: raw sockets need its port, the effects its metrics.
const stack = useFullStack({ name: 'hostile-props', faults: false, api: 'none' });
let api: TestApi;
let contract: Contract;
const account = uniqueId('acc');
const sku = uniqueId('sku');
const OPENING_BALANCE = 9_000_000_000_000_000;
const tally: Record<string, { runs: number; statuses: Record<number, number>; ms: Record<number, number> }> = {};

beforeAll(async () => {
  await Promise.all([stack.bank.openAccount(account, OPENING_BALANCE), stack.reservations.setStock(sku, 10_000_000)]);
  api = await startTestApi({
    env: {
      RETRYSAFE_TASK_QUEUE: stack.taskQueue,
      RETRYSAFE_API_KEYS: Object.values(tenants)
        .map((t) => `${t.secret}=${t.name}`)
        .join(','),
      RETRYSAFE_STEP_DEADLINE: '10s',
    },
  });
  contract = await Contract.load(api.url, `Bearer ${tenants.keys.secret}`);
});

afterAll(async () => {
  console.log(
    `hostile properties (seed ${SEED}):\n` +
      Object.entries(tally)
        .map(
          ([name, t]) =>
            `  ${name.padEnd(8)} ${String(t.runs).padStart(4)} requests  ${JSON.stringify(t.statuses)} ms ${JSON.stringify(t.ms)}`,
        )
        .join('\n'),
  );
  await api?.close();
});

/** Sends, records, and checks what every answer must satisfy whatever the input. */
async function send(property: string, req: Parameters<typeof rawRequest>[1], echoes: string[] = []): Promise<RawAnswer> {
  const began = Date.now();
  const result = await rawRequest(api.port, req);
  if (result.closed) throw new Error(`connection closed without an answer (${result.error ?? ''})`);
  const t = (tally[property] ??= { runs: 0, statuses: {}, ms: {} });
  t.ms[result.status] = (t.ms[result.status] ?? 0) + Date.now() - began;
  t.runs++;
  t.statuses[result.status] = (t.statuses[result.status] ?? 0) + 1;
  expect(result.status, result.body).toBeLessThan(500);
  const path = Buffer.isBuffer(req.path) ? req.path.toString('latin1') : req.path;
  const route = documentedRoute(path, req.method);
  if (route) expect(contract.violations(req.method, route, result)).toEqual([]);
  expect(leakIn(result.body, [path, decodeSafe(path), ...echoes])).toBeUndefined();
  return result;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const auth = (t: Tenant): [string, string] => ['Authorization', `Bearer ${t.secret}`];
const json: [string, string] = ['Content-Type', 'application/json'];

function expectProblem(answer: RawAnswer, status: number, codes: string[]): void {
  expect(answer.status, answer.body).toBe(status);
  expect(codes, answer.body).toContain(answer.json?.code);
}

let replays = 0;

/** An accepted start: 200 or 202, the operation named by `key`, replayed when the key was seen. */
function expectAccepted(answer: RawAnswer, tenant: Tenant, key: string, op: Accepted): void {
  expect([200, 202], answer.body).toContain(answer.status);
  expect(answer.json?.key).toBe(key);
  expect(answer.json?.type).toBe(op.type);
  const seen = tenant.accepted.has(key);
  expect(answer.headers['idempotent-replayed'], `replayed header for ${key}`).toBe(seen ? 'true' : undefined);
  if (seen) replays++;
  else tenant.accepted.set(key, op);
}

// ---------------------------------------------------------------------------------------

let keySeq = 0;
const nextKey = (prefix: string) => `${prefix}-${++keySeq}-${uniqueId('k')}`;
const validPayment = { account, amount: 1, currency: 'EUR' };

describe('Idempotency-Key header', () => {
  it('answers every value by the key contract: visible ASCII 1-255, bare or a structured-field string', async () => {
    const tenant = tenants.keys;
    await fc.assert(
      fc.asyncProperty(keyHeader, async (raw) => {
        const verdict = judgeKey(raw);
        const answer = await send(
          'keys',
          {
            method: 'POST',
            path: '/v1/payments',
            headers: [
              auth(tenant),
              json,
              ['Prefer', 'respond-async'],
              ...(raw === undefined ? [] : [['Idempotency-Key', raw] as [string, Buffer]]),
            ],
            body: JSON.stringify(validPayment),
          },
          raw === undefined ? [] : [raw.toString('latin1'), raw.toString('utf8')],
        );
        if (verdict.kind === 'valid') expectAccepted(answer, tenant, verdict.key, { type: 'payment', ...validPayment });
        else if (verdict.kind === 'missing') expectProblem(answer, 400, ['idempotency_key_missing']);
        else if (verdict.kind === 'invalid') expectProblem(answer, 400, ['idempotency_key_invalid']);
        else expectProblem(answer, 400, ['invalid_request']);
      }),
      { seed: SEED, numRuns: RUNS.keys },
    );
    // Pool keys sent bare, quoted or padded with whitespace name the same key: replays.
    expect(tenant.accepted.size).toBeGreaterThanOrEqual(KEY_POOL.length);
    expect(replays).toBeGreaterThan(30);
    expect(PARSER_REFUSED_BYTES.size).toBe(30);
  });
});

describe('request bodies', () => {
  it('accepts exactly the valid payments and checkouts, refuses the rest with 400/413/415', async () => {
    const tenant = tenants.bodies;
    await fc.assert(
      fc.asyncProperty(bodyCase({ account, sku }), contentType, async ({ type, text: generated }, ctype) => {
        const body = generated === BIG ? bigBody(BODY_LIMIT) : generated;
        const key = nextKey('body');
        const answer = await send(
          'bodies',
          {
            method: 'POST',
            path: type === 'payment' ? '/v1/payments' : '/v1/checkouts',
            headers: [
              auth(tenant),
              ['Idempotency-Key', key],
              ['Prefer', 'respond-async'],
              ...(ctype ? [['Content-Type', ctype] as [string, string]] : []),
            ],
            body,
          },
          // Field names from the body may come back in `errors`.
          [...body.matchAll(/"((?:[^"\\]|\\.)*)"\s*:/g)].map((m) => decodeJsonString(m[1]!)),
        );
        const size = Buffer.byteLength(body);
        // The media type is checked before the body is read, then the size.
        if (!(ctype?.startsWith('application/json') ?? false)) {
          // No body with no Content-Type is a missing body (400); any other type is 415.
          if (ctype === undefined && size === 0) return expectProblem(answer, 400, ['invalid_request']);
          return expectProblem(answer, 415, ['unsupported_media_type']);
        }
        if (size > BODY_LIMIT) return expectProblem(answer, 413, ['payload_too_large']);
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          return expectProblem(answer, 400, ['invalid_request']);
        }
        if (hasPoisonKeys(body) || !isValidBody(type, parsed)) return expectProblem(answer, 400, ['invalid_request']);
        const valid = parsed as { account: string; amount: number };
        expectAccepted(answer, tenant, key, { type, amount: valid.amount, account: valid.account });
      }),
      { seed: SEED, numRuns: RUNS.bodies },
    );
    expect(tenant.accepted.size).toBeGreaterThan(15);
  });
});

function decodeJsonString(s: string): string {
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

// A few keys, each started once and replayed after: the header is parsed the same way on
// a replay, and a wait only holds the first answer of each key.
const PREFER_KEYS = Array.from({ length: 8 }, (_, i) => `prefer-${i}`);

describe('Prefer header', () => {
  it('honours wait=0..60 and respond-async, refuses a bad wait naming the header, ignores the rest', async () => {
    const tenant = tenants.prefer;
    await fc.assert(
      fc.asyncProperty(preferCase, fc.constantFrom(...PREFER_KEYS), async ({ members, header }, key) => {
        const answer = await send(
          'prefer',
          {
            method: 'POST',
            path: '/v1/payments',
            headers: [auth(tenant), json, ['Idempotency-Key', key], ['Prefer', header]],
            body: JSON.stringify(validPayment),
          },
          [header],
        );
        if (answer.status === 400) {
          expect(answer.json?.code).toBe('invalid_request');
          expect(answer.json?.errors).toEqual([expect.objectContaining({ field: 'Prefer' })]);
        }
        if (members === undefined) {
          if (answer.status !== 400) expectAccepted(answer, tenant, key, { type: 'payment', ...validPayment });
          return;
        }
        const verdict = judgePrefer(members);
        if (!verdict.ok) return expectProblem(answer, 400, ['invalid_request']);
        expectAccepted(answer, tenant, key, { type: 'payment', ...validPayment });
        expect(answer.headers['preference-applied']).toBe(verdict.applied);
      }),
      { seed: SEED, numRuns: RUNS.prefer },
    );
  });
});

describe('GET /v1/operations query strings', () => {
  it("lists only the caller's operations for a valid query, refuses the rest with 400", async () => {
    const tenant = tenants.bodies;
    await fc.assert(
      fc.asyncProperty(queryCase, async ({ pairs, query }) => {
        const answer = await send('list', { method: 'GET', path: `/v1/operations?${query}`, headers: [auth(tenant)] }, [
          query,
          decodeSafe(query),
        ]);
        if (pairs !== undefined) {
          if (isValidListQuery(pairs)) expect(answer.status, answer.body).toBe(200);
          else expectProblem(answer, 400, ['invalid_request']);
        } else {
          expect([200, 400]).toContain(answer.status);
        }
        if (answer.status !== 200) return;
        const filter = Object.fromEntries(pairs ?? []) as Record<string, string>;
        for (const op of answer.json?.operations as Array<{ key: string; type: string; status: string }>) {
          expect(tenant.accepted.has(op.key), `${op.key} is not one of this tenant's operations`).toBe(true);
          if (filter.type) expect(op.type).toBe(filter.type);
          if (filter.status) expect(op.status).toBe(filter.status);
        }
      }),
      { seed: SEED, numRuns: RUNS.list },
    );
  });
});

describe('GET /v1/operations/{key} paths', () => {
  it("finds exactly the tenant's own keys, answers 404 or 400 for anything else", async () => {
    const tenant = tenants.keys;
    // A key with "/" can be read encoded or not.
    const slashKey = `a/${uniqueId('b')}/../c`;
    const started = await send('paths', {
      method: 'POST',
      path: '/v1/payments',
      headers: [auth(tenant), json, ['Idempotency-Key', slashKey], ['Prefer', 'respond-async']],
      body: JSON.stringify(validPayment),
    });
    expectAccepted(started, tenant, slashKey, { type: 'payment', ...validPayment });
    const own = [...tenant.accepted.keys()];
    const others = [...tenants.bodies.accepted.keys()];
    const pathCase = keyPathCase({ own, others, slashKey });
    await fc.assert(
      fc.asyncProperty(pathCase, async ({ key, path }) => {
        const answer = await send(
          'paths',
          { method: 'GET', path: Buffer.from(`/v1/operations/${path}`, 'latin1'), headers: [auth(tenant)] },
          [key ?? ''],
        );
        if (key === undefined) {
          expect([200, 400, 404]).toContain(answer.status);
          if (answer.status === 200) expect(tenant.accepted.has(String(answer.json?.key))).toBe(true);
          return;
        }
        if (tenant.accepted.has(key)) {
          expect(answer.status, answer.body).toBe(200);
          expect(answer.json?.key).toBe(key);
        } else {
          // Another tenant's key, or no key at all: not found, never someone else's operation.
          expectProblem(answer, 404, ['operation_not_found']);
        }
      }),
      { seed: SEED, numRuns: RUNS.paths },
    );
  });
});

describe('effects', () => {
  it(
    'started one execution per accepted key and nothing for a refused request; every ledger agrees',
    { timeout: 120_000 },
    async () => {
      const all = Object.values(tenants);
      for (const tenant of all) {
        // Wait for the accepted operations to finish, then audit each against the ledgers.
        let succeededAmount = 0;
        for (const [key, op] of tenant.accepted) {
          const operation = await waitTerminal(tenant, key);
          const violations = await auditOperation(
            { workflowId: `${tenant.name}/${key}`, type: op.type, amount: op.amount, operation },
            stack.bank,
            stack.reservations,
          );
          expect(violations).toEqual([]);
          if (operation.status === 'succeeded' && op.account === account) succeededAmount += op.amount;
        }
        (tenant as Tenant & { charged?: number }).charged = succeededAmount;
        // Visibility catches up within moments; a refused request would show up as an extra execution.
        const count = await eventually(
          async () => Number((await stack.temporal.workflow.count(`Tenant = '${tenant.name}'`)).count),
          tenant.accepted.size,
        );
        expect(count, `executions of tenant ${tenant.name}`).toBe(tenant.accepted.size);
      }
      const accepted = all.reduce((n, t) => n + t.accepted.size, 0);
      expect(await counter(api.registry, 'retrysafe_operations_started_total')).toBe(accepted);
      const charged = all.reduce((n, t) => n + ((t as Tenant & { charged?: number }).charged ?? 0), 0);
      expect(await stack.bank.balance(account)).toBe(OPENING_BALANCE - charged);
      console.log(`hostile properties: ${accepted} operations accepted and audited, ${charged} charged in total`);
    },
  );
});

async function waitTerminal(tenant: Tenant, key: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${api.url}/v1/operations/${encodeURIComponent(key)}`, {
      headers: { authorization: `Bearer ${tenant.secret}` },
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status === 200 && body.status !== 'processing') return body;
    if (Date.now() > deadline) throw new Error(`${tenant.name}/${key} still ${String(body.status ?? res.status)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function eventually(read: () => Promise<number>, expected: number, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value === expected || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}
