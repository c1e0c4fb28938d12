// What only credits do (what they share with charges is in movements.test.ts), and how
// they live beside charges: keys of their own, one balance for both, a reversal that claws
// back money already spent.
import { describe, expect, it } from 'vitest';
import { expectProblem, uniqueKey, useBank } from './helpers.js';

const bank = useBank();

describe('POST /credits', () => {
  it('a key used for a charge is not a credit key: the same body on POST /credits is another request (422)', async () => {
    const account = await bank.openAccount(1_000);
    const key = uniqueKey('debit');
    const body = { account, amount: 100, currency: 'EUR' };
    expect((await bank.charge(key, body)).status).toBe(201);

    expectProblem(await bank.credit(key, body), 422, 'idempotency_key_reused');
    expect(bank.rows('credits', key)).toEqual([]);
    expect(bank.balance(account)).toBe(900);
  });

  it('needs an Idempotency-Key: missing → 400 idempotency_key_missing, malformed → 400 idempotency_key_invalid', async () => {
    const account = await bank.openAccount(0);
    const body = { account, amount: 10, currency: 'EUR' };
    expectProblem(await bank.call('POST', '/credits', { body }), 400, 'idempotency_key_missing');
    expectProblem(await bank.call('POST', '/credits', { body, key: '"unterminated' }), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('POST', '/credits', { body, key: 'k'.repeat(513) }), 400, 'idempotency_key_invalid');
    expect(bank.balance(account)).toBe(0);
  });
});

describe('GET /credits/{key}', () => {
  it('a charge key is not a credit: each read looks only at its own entries', async () => {
    const key = uniqueKey('debit');
    expect((await bank.charge(key, { account: 'acc_alice', amount: 1, currency: 'EUR' })).status).toBe(201);
    expectProblem(await bank.call('GET', `/credits/${encodeURIComponent(key)}`), 404, 'credit_not_found');
  });
});

describe('one balance', () => {
  it('GET /accounts/{id} reflects charges, credits and the reversals of both', async () => {
    const account = await bank.openAccount(10_000);
    const body = (amount: number) => ({ account, amount, currency: 'EUR' });
    const [c1, c2, k1, k2] = [uniqueKey('debit'), uniqueKey('debit'), uniqueKey('credit'), uniqueKey('credit')];

    expect((await bank.charge(c1, body(1_000))).status).toBe(201); // 9_000
    expect((await bank.credit(k1, body(2_500))).status).toBe(201); // 11_500
    expect((await bank.charge(c2, body(300))).status).toBe(201); // 11_200
    expect((await bank.credit(k2, body(40))).status).toBe(201); // 11_240
    expect((await bank.reverse('credits', k1)).body).toMatchObject({ status: 'reversed', reclaimed: 2_500 }); // 8_740
    expect((await bank.reverse('charges', c2)).body).toMatchObject({ status: 'reversed', refunded: 300 }); // 9_040
    // Replays and repeated reversals move nothing.
    await bank.credit(k2, body(40));
    await bank.charge(c1, body(1_000));
    await bank.reverse('credits', k1);
    await bank.reverse('charges', c2);

    expect((await bank.call('GET', `/accounts/${account}`)).body).toEqual({ id: account, currency: 'EUR', balance: 9_040 });
  });

  it('a credit can pay for a charge the balance alone could not', async () => {
    const account = await bank.openAccount(100);
    const body = (amount: number) => ({ account, amount, currency: 'EUR' });
    expectProblem(await bank.charge(uniqueKey('debit'), body(500)), 402, 'insufficient_funds');
    expect((await bank.credit(uniqueKey('credit'), body(400))).status).toBe(201);
    expect((await bank.charge(uniqueKey('debit'), body(500))).status).toBe(201);
    expect(bank.balance(account)).toBe(0);
  });
});

describe('POST /credits/{key}/reverse', () => {
  it('claws back money already spent, leaving the balance below zero, so the compensation always finishes', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    await bank.credit(key, { account, amount: 1_000, currency: 'EUR' });
    expect((await bank.charge(uniqueKey('debit'), { account, amount: 800, currency: 'EUR' })).status).toBe(201);

    const res = await bank.reverse('credits', key);

    expect(res.body).toMatchObject({ status: 'reversed', reclaimed: 1_000 });
    expect((await bank.call('GET', `/accounts/${account}`)).body).toEqual({ id: account, currency: 'EUR', balance: -800 });
    // An account in debt can pay nothing.
    expectProblem(await bank.charge(uniqueKey('debit'), { account, amount: 1, currency: 'EUR' }), 402, 'insufficient_funds');
  });

  it('a credit fence does not fence the charge under the same key, nor the other way round', async () => {
    const account = await bank.openAccount(1_000);
    const creditKey = uniqueKey('x');
    const chargeKey = uniqueKey('y');
    await bank.reverse('credits', creditKey);
    await bank.reverse('charges', chargeKey);

    expect((await bank.charge(creditKey, { account, amount: 100, currency: 'EUR' })).status).toBe(201);
    expect((await bank.credit(chargeKey, { account, amount: 30, currency: 'EUR' })).status).toBe(201);
    expect(bank.balance(account)).toBe(930);
  });
});
