// Transfers end to end: the third built-in operation, defined by its steps alone (declared
// keyed HTTP calls, no activity code), through the real API, worker and bank. Every test
// counts effects on the bank's ledger: the debit under `<wf>/debit`, the credit under
// `<wf>/credit`, and both balances.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { auditOperation } from '../support/invariants.js';
import { expectFailedOperation, expectReplayed, expectSucceeded } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { acme, API_KEYS } from './tenants.js';

const stack = useFullStack({ name: 'transfers-e2e', reservations: false, apiKeys: API_KEYS, stepDeadlineMs: 3_000 });

function transfer(key: string, body: unknown, prefer = 'wait=20') {
  return stack.api.request('POST', '/v1/transfers', {
    body,
    headers: { ...acme, 'idempotency-key': key, prefer },
  });
}

async function accounts(from: number, to: number, currency = 'EUR'): Promise<{ from: string; to: string }> {
  const ids = { from: uniqueId('from'), to: uniqueId('to') };
  await stack.bank.openAccount(ids.from, from);
  await stack.bank.openAccount(ids.to, to, currency);
  return ids;
}

async function ledger(path: string, key: string) {
  const res = await fetch(`${stack.bank.url}/${path}/${encodeURIComponent(key)}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function audit(key: string, amount: number, operation: Record<string, unknown>) {
  return auditOperation({ workflowId: `acme/${key}`, type: 'transfer', amount, operation }, stack.bank);
}

describe('POST /v1/transfers', () => {
  it('moves the money once: debit and credit under derived keys, the result names both, a retry replays it', async () => {
    const { from, to } = await accounts(10_000, 2_000);
    const key = uniqueId('t');
    const body = { from, to, amount: 500, currency: 'EUR', description: 'rent' };
    const first = await transfer(key, body);
    expectSucceeded(first, 'transfer', key, [
      ['debit_source', `acme/${key}/debit`],
      ['credit_destination', `acme/${key}/credit`],
    ]);
    const result = first.body.result as Record<string, string>;
    expect(result.debitId).toBe((await ledger('charges', `acme/${key}/debit`)).body.chargeId);
    expect(result.creditId).toBe((await ledger('credits', `acme/${key}/credit`)).body.creditId);

    expectReplayed(await transfer(key, body), first);
    expect([await stack.bank.balance(from), await stack.bank.balance(to)]).toEqual([9_500, 2_500]);
    expect(await audit(key, 500, first.body)).toEqual([]);
  });

  it('refuses the same key with another amount (422, differences), and a transfer to the account it leaves (400 on to)', async () => {
    const { from, to } = await accounts(10_000, 0);
    const key = uniqueId('t');
    expect((await transfer(key, { from, to, amount: 100, currency: 'EUR' })).status).toBe(200);
    const reused = await transfer(key, { from, to, amount: 101, currency: 'EUR' });
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', differences: ['amount'] });

    const self = await transfer(uniqueId('t'), { from, to: from, amount: 100, currency: 'EUR' });
    expect(self.status).toBe(400);
    expect(self.body).toMatchObject({ code: 'invalid_request', errors: [{ field: 'to' }] });
    // Nothing started, nothing moved.
    expect([await stack.bank.balance(from), await stack.bank.balance(to)]).toEqual([9_900, 100]);
  });

  it('insufficient funds: refused at the debit, nothing to undo', async () => {
    const { from, to } = await accounts(50, 0);
    const key = uniqueId('t');
    const res = await transfer(key, { from, to, amount: 500, currency: 'EUR' });
    expect(res.status).toBe(200);
    expectFailedOperation(res.body, 'insufficient_funds', [], 'debit_source:failed credit_destination:pending');
    expect(await stack.bank.balance(from)).toBe(50);
    expect(await audit(key, 500, res.body)).toEqual([]);
  });

  it('an unknown destination: the credit is refused (destination_not_found) and the debit reversed', async () => {
    const { from } = await accounts(10_000, 0);
    const key = uniqueId('t');
    const res = await transfer(key, { from, to: uniqueId('nobody'), amount: 700, currency: 'EUR' });
    expect(res.status).toBe(200);
    expectFailedOperation(
      res.body,
      'destination_not_found',
      ['reverse_debit'],
      'debit_source:compensated credit_destination:failed',
    );
    expect((await ledger('charges', `acme/${key}/debit`)).body.status).toBe('reversed');
    expect(await stack.bank.balance(from)).toBe(10_000);
    expect(await audit(key, 700, res.body)).toEqual([]);
  });

  it('a destination in another currency: currency_mismatch, the debit reversed', async () => {
    const { from, to } = await accounts(10_000, 0, 'USD');
    const res = await transfer(uniqueId('t'), { from, to, amount: 700, currency: 'EUR' });
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'currency_mismatch', compensations: ['reverse_debit'] } });
    expect(await stack.bank.balance(from)).toBe(10_000);
  });

  it('lost responses at the bank: both calls retried with their keys, each applied once', async () => {
    const { from, to } = await accounts(10_000, 0);
    const key = uniqueId('t');
    await stack.bank.withFaults({ dropResponseAfterCommit: 1 }, async () => {
      expect((await transfer(key, { from, to, amount: 300, currency: 'EUR' }, 'respond-async')).status).toBe(202);
      // Every answer is lost; the effects are committed under their keys all the same.
      await sleep(1_000);
    });
    const final = await stack.api.waitTerminal(key, acme.authorization);
    expect(final).toMatchObject({ status: 'succeeded' });
    expect([await stack.bank.balance(from), await stack.bank.balance(to)]).toEqual([9_700, 300]);
    expect(await audit(key, 300, final)).toEqual([]);
  });

  it('a step still unknown at its deadline: fenced, reversed, transfer_unavailable', async () => {
    const { from, to } = await accounts(10_000, 0);
    const key = uniqueId('t');
    // The bank is down past the debit's 3 s deadline: the debit is fenced, and so is the
    // credit after it (a lost local attempt might have made it); both compensations find
    // nothing and leave tombstones, so a late original of either is refused. Nothing moves.
    await stack.bank.setFaults({ down: true });
    const started = await transfer(key, { from, to, amount: 400, currency: 'EUR' }, 'respond-async');
    expect(started.status).toBe(202);
    await sleep(4_000);
    await stack.bank.setFaults({ down: false });
    const final = await stack.api.waitTerminal(key, acme.authorization);
    expectFailedOperation(
      final,
      'transfer_unavailable',
      ['reverse_credit', 'reverse_debit'],
      'debit_source:fenced credit_destination:fenced',
    );
    expect((await ledger('charges', `acme/${key}/debit`)).body.status).toBe('fenced');
    expect((await ledger('credits', `acme/${key}/credit`)).body.status).toBe('fenced');
    expect([await stack.bank.balance(from), await stack.bank.balance(to)]).toEqual([10_000, 0]);
    expect(await audit(key, 400, final)).toEqual([]);
  });

  it('is listed with ?type=transfer, and described in the OpenAPI document', async () => {
    const { from, to } = await accounts(10_000, 0);
    const key = uniqueId('t');
    expect((await transfer(key, { from, to, amount: 1, currency: 'EUR' })).status).toBe(200);
    let listed: Array<{ key: string; type: string }> = [];
    for (let i = 0; i < 40 && !listed.some((o) => o.key === key); i++) {
      const page = await stack.api.request('GET', '/v1/operations?type=transfer&limit=100', { headers: acme });
      listed = page.body.operations as typeof listed;
      if (!listed.some((o) => o.key === key)) await sleep(250);
    }
    expect(listed.some((o) => o.key === key)).toBe(true);
    expect(listed.every((o) => o.type === 'transfer')).toBe(true);

    // The API description is not open: it needs an API key like the operations.
    const doc = (await stack.api.request('GET', '/openapi.json', { headers: acme })).body as {
      paths: Record<string, { post?: { operationId?: string; requestBody?: unknown } }>;
    };
    expect(doc.paths['/v1/transfers']?.post?.operationId).toBe('start_transfer');
    expect(JSON.stringify(doc.paths['/v1/transfers']?.post?.requestBody)).toContain('"from"');
  });
});
