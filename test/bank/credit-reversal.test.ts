import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank();
});
afterAll(async () => {
  await bank.close();
});

const reverse = (key: string) => bank.reverse('credits', key);
const view = (key: string) => bank.call('GET', `/credits/${encodeURIComponent(key)}`);

describe('POST /credits/{key}/reverse', () => {
  it('takes a credit back once: reversing twice gives the same answer and one clawback', async () => {
    const account = await bank.openAccount(1_000);
    const key = uniqueKey('credit');
    const credited = await bank.credit(key, { account, amount: 4_000, currency: 'EUR' });
    expect(bank.balance(account)).toBe(5_000);

    const first = await reverse(key);
    const second = await reverse(key);

    expect(first.status).toBe(200);
    expect(first.body).toEqual({ key, creditId: credited.body.id, status: 'reversed', reclaimed: 4_000 });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(bank.balance(account)).toBe(1_000);
    expect(bank.creditRows(key)).toEqual([{ status: 'reversed', amount: 4_000, credit_id: credited.body.id }]);
    const after = await view(key);
    expect(after.body).toMatchObject({ key, creditId: credited.body.id, status: 'reversed', amount: 4_000 });
    expect(new Date(String(after.body.reversedAt)).toISOString()).toBe(after.body.reversedAt);
  });

  it('the original credit, retried after its reversal, replays its 201 and credits nothing again', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    const body = { account, amount: 250, currency: 'EUR' };
    const credited = await bank.credit(key, body);
    await reverse(key);

    const retry = await bank.credit(key, body);

    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(credited.text);
    expect(bank.balance(account)).toBe(0);
  });

  it('claws back money already spent, leaving the balance below zero, so the compensation always finishes', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    await bank.credit(key, { account, amount: 1_000, currency: 'EUR' });
    expect((await bank.charge(uniqueKey('debit'), { account, amount: 800, currency: 'EUR' })).status).toBe(201);

    const res = await reverse(key);

    expect(res.body).toMatchObject({ status: 'reversed', reclaimed: 1_000 });
    expect((await bank.call('GET', `/accounts/${account}`)).body).toEqual({ id: account, currency: 'EUR', balance: -800 });
    // An account in debt can pay nothing.
    expectProblem(await bank.charge(uniqueKey('debit'), { account, amount: 1, currency: 'EUR' }), 402, 'insufficient_funds');
  });

  it('fences a key with no credit, so the late original gets 410 credit_fenced forever and credits nothing', async () => {
    const account = await bank.openAccount(500);
    const key = uniqueKey('credit');

    const fenced = await reverse(key);
    expect(fenced.status).toBe(200);
    expect(fenced.body).toEqual({ key, creditId: null, status: 'fenced', reclaimed: 0 });

    const late = await bank.credit(key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(late, 410, 'credit_fenced');
    expect(late.headers.get('idempotent-replayed')).toBe('false');
    const again = await bank.credit(key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(again, 410, 'credit_fenced');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(500);
    expect((await reverse(key)).body).toEqual({ key, creditId: null, status: 'fenced', reclaimed: 0 });
    expect(bank.creditRows(key)).toEqual([{ status: 'fenced', amount: null, credit_id: null }]);
    expect((await view(key)).body).toEqual({
      key,
      creditId: null,
      account: null,
      amount: null,
      currency: null,
      status: 'fenced',
      createdAt: expect.any(String),
      reversedAt: null,
    });
  });

  it('a credit fence does not fence the charge under the same key, nor the other way round', async () => {
    const account = await bank.openAccount(1_000);
    const creditKey = uniqueKey('x');
    const chargeKey = uniqueKey('y');
    await reverse(creditKey);
    await bank.reverse('charges', chargeKey);

    expect((await bank.charge(creditKey, { account, amount: 100, currency: 'EUR' })).status).toBe(201);
    expect((await bank.credit(chargeKey, { account, amount: 30, currency: 'EUR' })).status).toBe(201);
    expect(bank.balance(account)).toBe(930);
  });

  it('when the credit was declined, answers declined with nothing taken back', async () => {
    const key = uniqueKey('credit');
    expectProblem(await bank.credit(key, { account: 'acc_nobody', amount: 10, currency: 'EUR' }), 422, 'account_not_found');

    const res = await reverse(key);

    expect(res.body).toEqual({ key, creditId: null, status: 'declined', reclaimed: 0 });
    expect(bank.creditRows(key)).toEqual([{ status: 'declined', amount: 10, credit_id: null }]);
  });

  it('accepts no body, an empty JSON body and {}; keys with slashes are found encoded or not', async () => {
    const key = uniqueKey('credit');
    const url = `/credits/${encodeURIComponent(key)}/reverse`;
    const none = await bank.call('POST', url);
    const empty = await bank.call('POST', url, { raw: '', headers: { 'content-type': 'application/json' } });
    const object = await bank.call('POST', url, { body: {} });
    const raw = await bank.call('POST', `/credits/${key}/reverse`);
    for (const res of [none, empty, object, raw]) {
      expect(res.body).toEqual({ key, creditId: null, status: 'fenced', reclaimed: 0 });
    }
    expect(bank.creditRows(key)).toHaveLength(1);
  });

  it('a bad key is 400; a POST that is not a reversal is 404', async () => {
    expectProblem(await bank.call('POST', `/credits/${'k'.repeat(513)}/reverse`), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('POST', '/credits/%ZZ/reverse'), 400, 'invalid_request');
    expectProblem(await bank.call('POST', `/credits/${encodeURIComponent(uniqueKey('credit'))}`), 404, 'not_found');
    expectProblem(await bank.call('POST', '/credits//reverse'), 404, 'not_found');
  });
});
