import { describe, expect, it } from 'vitest';
import { IDENTIFIER_RULE } from '../../workflows/identity.js';
import { expectProblem, uniqueKey, useBank } from './helpers.js';

const bank = useBank();

const good = { account: 'acc_alice', amount: 1250, currency: 'EUR' };

describe.each(['/charges', '/credits'])('the %s body', (path) => {
  it.each([
    ['a string amount', { ...good, amount: '1250' }, 'amount'],
    ['a negative amount', { ...good, amount: -5 }, 'amount'],
    ['a zero amount', { ...good, amount: 0 }, 'amount'],
    ['a fractional amount', { ...good, amount: 12.5 }, 'amount'],
    ['a lower-case currency', { ...good, currency: 'eur' }, 'currency'],
    ['an unknown field', { ...good, description: 'x' }, 'description'],
    ['a missing field', { account: 'acc_alice', amount: 1 }, 'currency'],
    ['an empty account', { ...good, account: '' }, 'account'],
    ['an over-long account', { ...good, account: 'a'.repeat(129) }, 'account'],
    ['an amount past 2^53 - 1', { ...good, amount: 2 ** 53 }, 'amount'],
    ['a null currency', { ...good, currency: null }, 'currency'],
    ['a NUL in the account', { ...good, account: 'acc_alice\u0000' }, 'account'],
    ['a space in the account', { ...good, account: 'acc alice' }, 'account'],
    ['a slash in the account', { ...good, account: 'acc/../alice' }, 'account'],
    ['an account starting with "."', { ...good, account: '.acc' }, 'account'],
    ['a non-ASCII account', { ...good, account: 'accé' }, 'account'],
  ])('%s → 400 invalid_request naming the field', async (_name, body, field) => {
    const key = uniqueKey();
    const res = await bank.call('POST', path, { key, body });
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
    expect(bank.keyRows(key)).toBe(0);
  });

  it('a body that is not JSON, or no body at all → 400 invalid_request, key unused', async () => {
    const key = uniqueKey();
    expectProblem(await bank.call('POST', path, { key, raw: '{"account":' }), 400, 'invalid_request');
    expectProblem(await bank.call('POST', path, { key }), 400, 'invalid_request');
    expectProblem(await bank.call('POST', path, { key, body: [] }), 400, 'invalid_request');
    expect(bank.keyRows(key)).toBe(0);
  });
});

describe('account ids', () => {
  it('are identifiers: refused in words, and every id the sandbox and the tests open is one', async () => {
    const res = await bank.call('POST', '/charges', { key: uniqueKey(), body: { ...good, account: 'acc\u202ealice' } });
    expect(expectProblem(res, 400, 'invalid_request').errors).toEqual([{ field: 'account', message: IDENTIFIER_RULE }]);
    for (const id of ['acc_alice', 'acc_bob', 'acc-1a2b3c4d', 'acc_0195d2f0-0000-7000-8000-000000000001', 'A:b.c_d-e']) {
      expect((await bank.call('POST', '/accounts', { body: { id, currency: 'EUR', balance: 1 } })).status, id).toBe(201);
    }
  });
});

describe('account set-up', () => {
  it.each([
    ['a negative balance', { id: 'acc_x', currency: 'EUR', balance: -1 }],
    ['a fractional balance', { id: 'acc_x', currency: 'EUR', balance: 1.5 }],
    ['a bad currency', { id: 'acc_x', currency: 'EURO', balance: 1 }],
    ['an over-long id', { id: 'a'.repeat(129), currency: 'EUR', balance: 1 }],
    ['an id with a control character', { id: 'acc\u0007x', currency: 'EUR', balance: 1 }],
    ['an unknown field', { id: 'acc_x', currency: 'EUR', balance: 1, owner: 'x' }],
  ])('POST /accounts with %s → 400 invalid_request', async (_name, body) => {
    expectProblem(await bank.call('POST', '/accounts', { body }), 400, 'invalid_request');
  });
});
