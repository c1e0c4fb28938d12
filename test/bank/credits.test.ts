import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank();
});
afterAll(async () => {
  await bank.close();
});

describe('POST /credits', () => {
  it('credits once per key: run twice, one credit, the retry replays the stored 201', async () => {
    const account = await bank.openAccount(2_000);
    const key = uniqueKey('credit');
    const body = { account, amount: 750, currency: 'EUR' };

    const first = await bank.credit(key, body);
    const second = await bank.credit(key, body);

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toEqual({
      id: expect.stringMatching(/^cr_[0-9a-f]{24}$/),
      key,
      account,
      amount: 750,
      currency: 'EUR',
      status: 'credited',
      createdAt: expect.any(String),
    });
    expect(new Date(String(first.body.createdAt)).toISOString()).toBe(first.body.createdAt);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(bank.creditRows(key)).toEqual([{ status: 'credited', amount: 750, credit_id: first.body.id }]);
    expect(bank.balance(account)).toBe(2_750);
    const view = await bank.call('GET', `/credits/${encodeURIComponent(key)}`);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      key,
      creditId: first.body.id,
      account,
      amount: 750,
      currency: 'EUR',
      status: 'credited',
      createdAt: first.body.createdAt,
      reversedAt: null,
    });
  });

  it('concurrent duplicates credit once and all successes carry the same credit', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => bank.credit(key, { account, amount: 300, currency: 'EUR' })),
    );
    const ok = answers.filter((a) => a.status === 201);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    expect(ok.filter((a) => a.headers.get('idempotent-replayed') === 'false')).toHaveLength(1);
    expect(bank.creditRows(key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(300);
  });

  it('refuses the same key with a different body (422 idempotency_key_reused) and credits nothing more', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    const original = await bank.credit(key, { account, amount: 300, currency: 'EUR' });

    const changed = await bank.credit(key, { account, amount: 301, currency: 'EUR' });

    expectProblem(changed, 422, 'idempotency_key_reused');
    expect(changed.headers.get('idempotent-replayed')).toBeNull();
    const replay = await bank.credit(key, { account, amount: 300, currency: 'EUR' });
    expect(replay.text).toBe(original.text);
    expect(bank.creditRows(key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(300);
  });

  it('a key used for a charge is not a credit key: the same body on POST /credits is another request (422)', async () => {
    const account = await bank.openAccount(1_000);
    const key = uniqueKey('debit');
    const body = { account, amount: 100, currency: 'EUR' };
    expect((await bank.charge(key, body)).status).toBe(201);

    expectProblem(await bank.credit(key, body), 422, 'idempotency_key_reused');
    expect(bank.creditRows(key)).toEqual([]);
    expect(bank.balance(account)).toBe(900);
  });

  it('answers 422 account_not_found for an unknown account, stored and replayed, leaving a declined row', async () => {
    const key = uniqueKey('credit');
    const body = { account: 'acc_nobody', amount: 10, currency: 'EUR' };

    const first = await bank.credit(key, body);
    const replay = await bank.credit(key, body);

    expectProblem(first, 422, 'account_not_found');
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expectProblem(replay, 422, 'account_not_found');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(bank.creditRows(key)).toEqual([{ status: 'declined', amount: 10, credit_id: null }]);
    expect((await bank.call('GET', `/credits/${encodeURIComponent(key)}`)).body).toMatchObject({
      key,
      creditId: null,
      account: 'acc_nobody',
      status: 'declined',
    });
  });

  it('answers 422 currency_mismatch when the account holds another currency, balance unchanged', async () => {
    const account = await bank.openAccount(5_000, 'USD');
    const key = uniqueKey('credit');
    const body = { account, amount: 10, currency: 'EUR' };

    const first = await bank.credit(key, body);
    const replay = await bank.credit(key, body);

    const problem = expectProblem(first, 422, 'currency_mismatch');
    expect(problem.detail).toBe(`account ${account} holds USD, not EUR`);
    expectProblem(replay, 422, 'currency_mismatch');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(5_000);
    expect(bank.creditRows(key)).toEqual([{ status: 'declined', amount: 10, credit_id: null }]);
  });

  it('needs an Idempotency-Key: missing → 400 idempotency_key_missing, malformed → 400 idempotency_key_invalid', async () => {
    const account = await bank.openAccount(0);
    const body = { account, amount: 10, currency: 'EUR' };
    expectProblem(await bank.call('POST', '/credits', { body }), 400, 'idempotency_key_missing');
    expectProblem(await bank.call('POST', '/credits', { body, key: '"unterminated' }), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('POST', '/credits', { body, key: 'k'.repeat(513) }), 400, 'idempotency_key_invalid');
    expect(bank.balance(account)).toBe(0);
  });

  it('after a validation error the key is still unused', async () => {
    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    expectProblem(await bank.credit(key, { account, amount: 12.5, currency: 'EUR' }), 400, 'invalid_request');
    expect(bank.keyRows(key)).toBe(0);

    const good = await bank.credit(key, { account, amount: 12, currency: 'EUR' });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBe('false');
  });
});

describe('GET /credits/{key}', () => {
  it('is 404 credit_not_found for an unknown key, 400 for a bad key, and finds keys with slashes encoded or not', async () => {
    expectProblem(await bank.call('GET', `/credits/${encodeURIComponent(uniqueKey('credit'))}`), 404, 'credit_not_found');
    expectProblem(await bank.call('GET', '/credits/%E2%82%AC'), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('GET', '/credits/%ZZ'), 400, 'invalid_request');

    const account = await bank.openAccount(0);
    const key = uniqueKey('credit');
    const credited = await bank.credit(key, { account, amount: 5, currency: 'EUR' });
    const encoded = await bank.call('GET', `/credits/${encodeURIComponent(key)}`);
    const raw = await bank.call('GET', `/credits/${key}`);
    expect(encoded.body).toMatchObject({ key, creditId: credited.body.id, status: 'credited' });
    expect(raw.body).toEqual(encoded.body);
  });

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
