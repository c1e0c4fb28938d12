import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank();
});
afterAll(async () => {
  await bank.close();
});

async function openAccount(balance: number): Promise<string> {
  const id = `acc_${Math.random().toString(36).slice(2)}`;
  await bank.call('POST', '/accounts', { body: { id, currency: 'EUR', balance } });
  return id;
}

const reverse = (key: string) => bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);

describe('POST /charges/{key}/reverse', () => {
  it('refunds a captured charge once: reversing twice gives the same answer and one refund', async () => {
    const account = await openAccount(10_000);
    const key = uniqueKey();
    const charged = await bank.charge(key, { account, amount: 4_000, currency: 'EUR' });
    expect(bank.balance(account)).toBe(6_000);

    const first = await reverse(key);
    const second = await reverse(key);

    expect(first.status).toBe(200);
    expect(first.body).toEqual({ key, chargeId: charged.body.id, status: 'reversed', refunded: 4_000 });
    expect(second.body).toEqual(first.body);
    expect(bank.balance(account)).toBe(10_000);
    const view = await bank.call('GET', `/charges/${encodeURIComponent(key)}`);
    expect(view.body).toMatchObject({ key, chargeId: charged.body.id, status: 'reversed', amount: 4_000 });
    expect(typeof view.body.reversedAt).toBe('string');
  });

  it('fences a key with no charge, so the late original gets 410 charge_fenced forever and moves no money', async () => {
    const account = await openAccount(10_000);
    const key = uniqueKey();

    const fenced = await reverse(key);
    expect(fenced.status).toBe(200);
    expect(fenced.body).toEqual({ key, chargeId: null, status: 'fenced', refunded: 0 });

    const late = await bank.charge(key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(late, 410, 'charge_fenced');
    expect(late.headers.get('idempotent-replayed')).toBe('false');
    const again = await bank.charge(key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(again, 410, 'charge_fenced');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(10_000);
    expect((await reverse(key)).body).toEqual({ key, chargeId: null, status: 'fenced', refunded: 0 });
    expect((await bank.call('GET', `/charges/${encodeURIComponent(key)}`)).body).toMatchObject({
      key,
      chargeId: null,
      account: null,
      amount: null,
      currency: null,
      status: 'fenced',
      reversedAt: null,
    });
  });

  it('when the charge was declined, answers declined with nothing refunded', async () => {
    const account = await openAccount(100);
    const key = uniqueKey();
    expectProblem(await bank.charge(key, { account, amount: 1_000, currency: 'EUR' }), 402, 'insufficient_funds');

    const res = await reverse(key);

    expect(res.body).toEqual({ key, chargeId: null, status: 'declined', refunded: 0 });
    expect(bank.balance(account)).toBe(100);
  });

  it('accepts no body, an empty JSON body and {}', async () => {
    const key = uniqueKey();
    const url = `/charges/${encodeURIComponent(key)}/reverse`;
    const none = await bank.call('POST', url);
    const empty = await bank.call('POST', url, { raw: '', headers: { 'content-type': 'application/json' } });
    const object = await bank.call('POST', url, { body: {} });
    for (const res of [none, empty, object]) expect(res.body).toEqual({ key, chargeId: null, status: 'fenced', refunded: 0 });
  });

  it('finds keys with slashes whether the path encodes them or not', async () => {
    const account = await openAccount(1_000);
    const key = uniqueKey();
    const charged = await bank.charge(key, { account, amount: 10, currency: 'EUR' });

    const encoded = await bank.call('GET', `/charges/${encodeURIComponent(key)}`);
    const raw = await bank.call('GET', `/charges/${key}`);
    expect(encoded.status).toBe(200);
    expect(encoded.body).toMatchObject({ key, chargeId: charged.body.id, status: 'captured' });
    expect(raw.body).toEqual(encoded.body);

    const reversed = await bank.call('POST', `/charges/${key}/reverse`);
    expect(reversed.body).toMatchObject({ key, status: 'reversed', refunded: 10 });
    expect(bank.balance(account)).toBe(1_000);
  });

  it('a key ending in /reverse is still one key', async () => {
    const key = `${uniqueKey()}/reverse`;
    const res = await bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);
    expect(res.body).toMatchObject({ key, status: 'fenced' });
    expect(bank.chargeRows(key)).toHaveLength(1);
  });

  it('GET of an unknown key is 404 charge_not_found; a bad key is 400; a bad path is 404', async () => {
    expectProblem(await bank.call('GET', `/charges/${encodeURIComponent(uniqueKey())}`), 404, 'charge_not_found');
    expectProblem(await bank.call('POST', `/charges/${'k'.repeat(513)}/reverse`), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('GET', '/charges/%E2%82%AC'), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('POST', `/charges/${encodeURIComponent(uniqueKey())}`), 404, 'not_found');
    expectProblem(await bank.call('GET', '/charges/%ZZ'), 400, 'invalid_request');
  });

  it('accepts a 512-character key in the path', async () => {
    const key = `k/${'x'.repeat(510)}`;
    const res = await bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key, status: 'fenced' });
  });
});
