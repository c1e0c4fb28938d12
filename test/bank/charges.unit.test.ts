// What only charges do (what they share with credits is in movements.test.ts): the key in
// either of its two forms, a fingerprint of the request rather than its spelling, a short
// balance refused for good; and the accounts. (A locked database and the health check are
// the sandboxes' shared edge: test/sandboxes.)
import { describe, expect, it } from 'vitest';
import { expectProblem, uniqueKey, useBank } from './helpers.js';

const bank = useBank();

describe('POST /charges', () => {
  it('treats the Structured Field form "k" and the bare form k as the same key', async () => {
    const account = await bank.openAccount(5_000);
    const key = uniqueKey();
    const body = { account, amount: 100, currency: 'EUR' };

    const quoted = await bank.call('POST', '/charges', { key: `"${key}"`, body });
    const bare = await bank.call('POST', '/charges', { key, body });

    expect(quoted.status).toBe(201);
    expect(bare.headers.get('idempotent-replayed')).toBe('true');
    expect(bare.body.id).toBe(quoted.body.id);
    expect(bank.balance(account)).toBe(4_900);
  });

  it('fingerprints the request, not its spelling: reordered fields are the same request', async () => {
    const account = await bank.openAccount(5_000);
    const key = uniqueKey();
    const first = await bank.call('POST', '/charges', { key, raw: `{"account":"${account}","amount":10,"currency":"EUR"}` });
    const again = await bank.call('POST', '/charges', {
      key,
      raw: `{ "currency": "EUR", "amount": 10.0, "account": "${account}" }`,
    });
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(4_990);
  });

  it('when the balance is short, answers 402 insufficient_funds, stores it and replays it even after a top-up', async () => {
    const account = await bank.openAccount(2_000);
    const key = uniqueKey();
    const body = { account, amount: 5_000, currency: 'EUR' };

    const first = await bank.charge(key, body);
    expectProblem(first, 402, 'insufficient_funds');
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    await bank.call('POST', '/accounts', { body: { id: account, currency: 'EUR', balance: 10_000 } });
    const replay = await bank.charge(key, body);

    expectProblem(replay, 402, 'insufficient_funds');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(bank.balance(account)).toBe(10_000);
    expect(bank.rows('charges', key)).toEqual([{ status: 'declined', amount: 5_000, id: null }]);
    const view = await bank.call('GET', `/charges/${encodeURIComponent(key)}`);
    expect(view.body).toMatchObject({ key, chargeId: null, status: 'declined', amount: 5_000 });
  });
});

describe('accounts', () => {
  it('opens the demo accounts on first start', async () => {
    expect((await bank.call('GET', '/accounts/acc_alice')).body).toEqual({
      id: 'acc_alice',
      currency: 'EUR',
      balance: 1_000_000,
    });
    expect((await bank.call('GET', '/accounts/acc_bob')).body).toEqual({ id: 'acc_bob', currency: 'EUR', balance: 2_000 });
  });

  it('POST /accounts creates or replaces; GET of an unknown account is 404 account_not_found', async () => {
    const created = await bank.call('POST', '/accounts', { body: { id: 'acc_carol', currency: 'GBP', balance: 50 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 'acc_carol', currency: 'GBP', balance: 50 });
    await bank.call('POST', '/accounts', { body: { id: 'acc_carol', currency: 'GBP', balance: 75 } });
    expect((await bank.call('GET', '/accounts/acc_carol')).body).toEqual({ id: 'acc_carol', currency: 'GBP', balance: 75 });
    expectProblem(await bank.call('GET', '/accounts/acc_nobody'), 404, 'account_not_found');
  });
});
