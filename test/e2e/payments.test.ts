// Idempotent payments end to end: real HTTP API, real dev server, real worker, real bank.
// Every test counts effects at the bank (balance, charge records), not just statuses.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectReplayed, expectSucceeded } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { acme, API_KEYS, umbrella } from './tenants.js';

const stack = useFullStack({ name: 'payments-e2e', reservations: false, apiKeys: API_KEYS, stepDeadlineMs: 3_000 });

async function pay(key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return stack.api.request('POST', '/v1/payments', {
    body,
    headers: { ...acme, ...(key === undefined ? {} : { 'idempotency-key': key }), prefer: 'wait=20', ...headers },
  });
}

async function executionsOf(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of stack.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) n++;
  return n;
}

async function exists(workflowId: string): Promise<boolean> {
  try {
    await stack.temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch {
    return false;
  }
}

describe('POST /v1/payments', () => {
  it('charges once for the same key sent twice, and replays the same result', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('order');
    const first = await pay(key, { account, amount: 1250, currency: 'EUR' });
    expectSucceeded(first, 'payment', key, [['charge_payment', `acme/${key}/charge`]]);
    expect(first.headers.get('idempotent-replayed')).not.toBe('true');
    expect(first.body.links).toMatchObject({ self: `/v1/operations/${key}` });
    const chargeId = (first.body.result as Record<string, string>).chargeId;
    expect(chargeId).toMatch(/^ch_/);

    expectReplayed(await pay(key, { account, amount: 1250, currency: 'EUR' }), first);
    expect(await stack.bank.balance(account)).toBe(8750);
  });

  it('answers 50 concurrent requests with one key from one execution and one charge', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('burst');
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => pay(key, { account, amount: 700, currency: 'EUR' }, { prefer: 'wait=30' })),
    );
    for (const a of answers) {
      expect([200, 202]).toContain(a.status);
      expect(a.body.key).toBe(key);
    }
    const finals = answers.filter((a) => a.status === 200);
    expect(new Set(finals.map((a) => (a.body.result as Record<string, string>).chargeId)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(await executionsOf(`acme/${key}`)).toBe(1);
    expect(await stack.bank.balance(account)).toBe(9300);
  });

  it('refuses the same key with a different amount with 422 naming amount, and charges nothing more', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('order');
    expect((await pay(key, { account, amount: 1000, currency: 'EUR' })).status).toBe(200);
    const reused = await pay(key, { account, amount: 2000, currency: 'EUR' });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', differences: ['amount'] });
    expect(await stack.bank.balance(account)).toBe(9000);
  });

  it('treats the quoted ("k") and bare (k) forms of a key as the same operation', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('quoted');
    const quoted = await pay(`"${key}"`, { account, amount: 300, currency: 'EUR' });
    const bare = await pay(key, { account, amount: 300, currency: 'EUR' });
    expect(quoted.status).toBe(200);
    expect(bare.status).toBe(200);
    expect(bare.headers.get('idempotent-replayed')).toBe('true');
    expect(bare.body.result).toEqual(quoted.body.result);
    expect(await stack.bank.balance(account)).toBe(9700);
  });

  it('refuses invalid input of every kind with a problem, starts nothing, and leaves the key usable', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('invalid');
    const good = { account, amount: 100, currency: 'EUR' };
    const cases: Array<{ name: string; key?: string; body: unknown; raw?: string; status: number; code: string }> = [
      { name: 'no key', body: good, status: 400, code: 'idempotency_key_missing' },
      { name: '256-character key', key: 'k'.repeat(256), body: good, status: 400, code: 'idempotency_key_invalid' },
      { name: 'non-ASCII key', key: 'clé-1', body: good, status: 400, code: 'idempotency_key_invalid' },
      { name: 'negative amount', key, body: { ...good, amount: -5 }, status: 400, code: 'invalid_request' },
      { name: 'fractional amount', key, body: { ...good, amount: 10.5 }, status: 400, code: 'invalid_request' },
      { name: 'string amount', key, body: { ...good, amount: '100' }, status: 400, code: 'invalid_request' },
      { name: 'unknown currency', key, body: { ...good, currency: 'XXQ' }, status: 400, code: 'invalid_request' },
      { name: 'unknown field', key, body: { ...good, tip: 5 }, status: 400, code: 'invalid_request' },
      { name: 'malformed JSON', key, body: undefined, raw: '{"account": ', status: 400, code: 'invalid_request' },
      {
        name: 'oversized body',
        key,
        body: { ...good, description: 'x'.repeat(200_000) },
        status: 413,
        code: 'payload_too_large',
      },
    ];
    for (const c of cases) {
      const res = c.raw
        ? await stack.api.request('POST', '/v1/payments', {
            rawBody: c.raw,
            headers: { ...acme, 'idempotency-key': c.key!, 'content-type': 'application/json' },
          })
        : await pay(c.key, c.body);
      expect({ name: c.name, status: res.status, code: res.body.code }).toEqual({ name: c.name, status: c.status, code: c.code });
      expect(res.headers.get('content-type'), c.name).toMatch(/^application\/problem\+json/);
    }
    expect(await exists(`acme/${key}`)).toBe(false);
    expect(await stack.bank.balance(account)).toBe(10_000);
    const after = await pay(key, good);
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('succeeded');
    expect(await stack.bank.balance(account)).toBe(9_900);
  });

  it('when funds are insufficient, fails with insufficient_funds, replays it identically, and leaves the balance', async () => {
    const account = await stack.bank.newAccount(500);
    const key = uniqueId('poor');
    const first = await pay(key, { account, amount: 1250, currency: 'EUR' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'failed', error: { code: 'insufficient_funds', compensations: [] } });
    expectReplayed(await pay(key, { account, amount: 1250, currency: 'EUR' }), first);
    expect(await stack.bank.balance(account)).toBe(500);
  });

  it('when the bank drops half its responses after commit, every payment succeeds and is charged once', async () => {
    const account = await stack.bank.newAccount(100_000);
    await stack.bank.withFaults({ dropResponseAfterCommit: 0.5 }, async () => {
      const keys = Array.from({ length: 10 }, () => uniqueId('lossy'));
      const answers = await Promise.all(
        keys.map((k) => pay(k, { account, amount: 1000, currency: 'EUR' }, { prefer: 'wait=60' })),
      );
      for (const a of answers) expect(a.body.status).toBe('succeeded');
      for (const k of keys)
        expect((await stack.bank.charge(`acme/${k}/charge`)).body).toMatchObject({ status: 'captured', amount: 1000 });
      expect(await stack.bank.balance(account)).toBe(90_000);
    });
  });

  it('when the bank is down past the deadline, fences the charge: payment_unavailable, and a late charge is refused', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('down');
    await stack.bank.setFaults({ down: true });
    const started = await pay(key, { account, amount: 400, currency: 'EUR' }, { prefer: 'respond-async' });
    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toBe(`/v1/operations/${key}`);
    expect(Number(started.headers.get('retry-after'))).toBeGreaterThan(0);
    await sleep(3_500);
    await stack.bank.setFaults({ down: false });
    const final = await stack.api.waitTerminal(key, acme.authorization);
    expect(final).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
      steps: [{ name: 'charge_payment', status: 'fenced' }],
    });
    // A late original of the charge is refused: the fence left a tombstone under its key.
    expect((await stack.bank.postCharge(`acme/${key}/charge`, { account, amount: 400, currency: 'EUR' })).status).toBe(410);
    expect(await stack.bank.balance(account)).toBe(10_000);
  });
});

describe('GET /v1/operations/{key}', () => {
  it("answers 404 for a key never used, and for another tenant's key", async () => {
    const never = await stack.api.request('GET', `/v1/operations/${uniqueId('never')}`, { headers: acme });
    expect(never.status).toBe(404);
    expect(never.body.code).toBe('operation_not_found');

    const account = await stack.bank.newAccount(1_000);
    const key = uniqueId('mine');
    expect((await pay(key, { account, amount: 10, currency: 'EUR' })).status).toBe(200);
    const mine = await stack.api.request('GET', `/v1/operations/${key}`, { headers: acme });
    expect(mine.status).toBe(200);
    expect(mine.body.status).toBe('succeeded');
    const theirs = await stack.api.request('GET', `/v1/operations/${key}`, { headers: umbrella });
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('operation_not_found');
  });

  it('lets two tenants use the same key without meeting', async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('shared');
    const a = await pay(key, { account, amount: 100, currency: 'EUR' });
    const b = await pay(key, { account, amount: 200, currency: 'EUR' }, umbrella);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).not.toBe('true');
    expect(await stack.bank.balance(account)).toBe(9_700);
  });

  it("lists only the tenant's own operations, filtered by status and type", async () => {
    const account = await stack.bank.newAccount(10_000);
    const key = uniqueId('listed');
    expect((await pay(key, { account, amount: 10, currency: 'EUR' }, umbrella)).status).toBe(200);
    // Visibility is eventually consistent: poll briefly.
    let listed: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 40; i++) {
      const res = await stack.api.request('GET', '/v1/operations?type=payment&status=succeeded&limit=100', {
        headers: umbrella,
      });
      expect(res.status).toBe(200);
      listed = res.body.operations as Array<Record<string, unknown>>;
      if (listed.some((o) => o.key === key)) break;
      await sleep(250);
    }
    expect(listed.some((o) => o.key === key)).toBe(true);
    expect(listed.every((o) => o.type === 'payment' && o.status === 'succeeded')).toBe(true);
    const acmes = await stack.api.request('GET', '/v1/operations?limit=100', { headers: acme });
    expect((acmes.body.operations as Array<Record<string, unknown>>).some((o) => o.key === key)).toBe(false);
  });
});
