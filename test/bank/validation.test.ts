import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank();
});
afterAll(async () => {
  await bank.close();
});

const good = { account: 'acc_alice', amount: 1250, currency: 'EUR' };

describe('the Idempotency-Key header', () => {
  it('missing → 400 idempotency_key_missing', async () => {
    expectProblem(await bank.call('POST', '/charges', { body: good }), 400, 'idempotency_key_missing');
  });

  it('513 characters → 400 idempotency_key_invalid; 512 are fine', async () => {
    expectProblem(await bank.charge('k'.repeat(513), good), 400, 'idempotency_key_invalid');
    expectProblem(await bank.charge(`"${'k'.repeat(513)}"`, good), 400, 'idempotency_key_invalid');
    const max = `${uniqueKey()}/`.padEnd(512, 'x');
    expect((await bank.charge(max, good)).status).toBe(201);
  });

  it.each([
    ['non-ASCII', 'clé-1'],
    ['a bare key with a space', 'a b'],
    ['an empty sf-string', '""'],
    ['an unterminated sf-string', '"abc'],
    ['an sf-string with parameters', '"abc";v=1'],
    ['an sf-string with trailing garbage', '"abc" x'],
    ['two keys', 'a, b'],
    ['a key wrapped in no-break spaces (not HTTP whitespace)', '\u00a0abc\u00a0'],
  ])('%s → 400 idempotency_key_invalid', async (_name, key) => {
    expectProblem(await bank.charge(key, good), 400, 'idempotency_key_invalid');
  });

  it('an sf-string may hold a space and escaped quotes', async () => {
    const key = `${uniqueKey()} "quoted"`;
    const sf = `"${key.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    const res = await bank.charge(sf, good);
    expect(res.status).toBe(201);
    expect(res.body.key).toBe(key);
  });
});

describe('the charge body', () => {
  it.each([
    ['a string amount', { ...good, amount: '1250' }, 'amount'],
    ['a negative amount', { ...good, amount: -5 }, 'amount'],
    ['a zero amount', { ...good, amount: 0 }, 'amount'],
    ['a fractional amount', { ...good, amount: 12.5 }, 'amount'],
    ['a lower-case currency', { ...good, currency: 'eur' }, 'currency'],
    ['an unknown field', { ...good, description: 'x' }, 'description'],
    ['a missing field', { account: 'acc_alice', amount: 1 }, 'currency'],
    ['an empty account', { ...good, account: '' }, 'account'],
    ['an array', [good], 'body'],
  ])('%s → 400 invalid_request naming the field', async (_name, body, field) => {
    const key = uniqueKey();
    const res = await bank.charge(key, body);
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
    expect(bank.keyRows(key)).toBe(0);
  });

  it('malformed JSON → 400 invalid_request', async () => {
    expectProblem(await bank.call('POST', '/charges', { key: uniqueKey(), raw: '{"account":' }), 400, 'invalid_request');
  });

  it('no body → 400 invalid_request', async () => {
    expectProblem(await bank.call('POST', '/charges', { key: uniqueKey() }), 400, 'invalid_request');
  });

  it('a body over 64 KiB → 413 payload_too_large', async () => {
    const res = await bank.call('POST', '/charges', {
      key: uniqueKey(),
      raw: JSON.stringify({ ...good, pad: 'x'.repeat(70_000) }),
    });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('a body that is not JSON → 415 unsupported_media_type', async () => {
    const res = await bank.call('POST', '/charges', {
      key: uniqueKey(),
      raw: '<charge/>',
      headers: { 'content-type': 'application/xml' },
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });
});

describe('set-up and routing', () => {
  it.each([
    ['a negative balance', { id: 'acc_x', currency: 'EUR', balance: -1 }],
    ['a fractional balance', { id: 'acc_x', currency: 'EUR', balance: 1.5 }],
    ['a bad currency', { id: 'acc_x', currency: 'EURO', balance: 1 }],
    ['an over-long id', { id: 'a'.repeat(129), currency: 'EUR', balance: 1 }],
    ['an unknown field', { id: 'acc_x', currency: 'EUR', balance: 1, owner: 'x' }],
  ])('POST /accounts with %s → 400 invalid_request', async (_name, body) => {
    expectProblem(await bank.call('POST', '/accounts', { body }), 400, 'invalid_request');
  });

  it('an unknown route → 404 not_found problem', async () => {
    expectProblem(await bank.call('GET', '/nope'), 404, 'not_found');
    expectProblem(await bank.call('DELETE', '/accounts/acc_alice'), 404, 'not_found');
  });
});
