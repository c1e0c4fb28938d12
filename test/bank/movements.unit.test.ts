// What charges and credits share (movements.ts): one movement per key, run twice or
// twenty times at once; the same key with another body refused; refusals stored and
// replayed; a bad body consumes no key; and the keyed reversal, once, with a tombstone that
// refuses a late original for good.
import { describe, expect, it } from 'vitest';
import { expectProblem, uniqueKey, useBank } from './helpers.js';
import { MOVEMENTS, rowsOf, viewOf } from './movements.js';

const bank = useBank();

describe.each(MOVEMENTS)('POST /$collection', (m) => {
  it(`moves money once per key: run twice, one ${m.name}, the retry replays the stored 201`, async () => {
    const account = await bank.openAccount(10_000);
    const key = uniqueKey(m.name);
    const body = { account, amount: 1250, currency: 'EUR' };

    const first = await m.send(bank, key, body);
    const second = await m.send(bank, key, body);

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toEqual({
      id: expect.stringMatching(m.id),
      key,
      account,
      amount: 1250,
      currency: 'EUR',
      status: m.done,
      createdAt: expect.any(String),
    });
    expect(new Date(String(first.body.createdAt)).toISOString()).toBe(first.body.createdAt);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(rowsOf(bank, m, key)).toEqual([{ status: m.done, amount: 1250, id: first.body.id }]);
    expect(bank.balance(account)).toBe(10_000 + m.sign * 1250);
    const view = await viewOf(bank, m, key);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      key,
      [m.idField]: first.body.id,
      account,
      amount: 1250,
      currency: 'EUR',
      status: m.done,
      createdAt: first.body.createdAt,
      reversedAt: null,
    });
  });

  it(`concurrent duplicates move money once and all successes carry the same ${m.name}`, async () => {
    const account = await bank.openAccount(100_000);
    const key = uniqueKey(m.name);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => m.send(bank, key, { account, amount: 700, currency: 'EUR' })),
    );
    const ok = answers.filter((a) => a.status === 201);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    expect(ok.filter((a) => a.headers.get('idempotent-replayed') === 'false')).toHaveLength(1);
    expect(rowsOf(bank, m, key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(100_000 + m.sign * 700);
  });

  it('refuses the same key with a different body (422 idempotency_key_reused) and moves nothing more', async () => {
    const account = await bank.openAccount(5_000);
    const key = uniqueKey(m.name);
    const original = await m.send(bank, key, { account, amount: 300, currency: 'EUR' });

    const changed = await m.send(bank, key, { account, amount: 301, currency: 'EUR' });

    expectProblem(changed, 422, 'idempotency_key_reused');
    expect(changed.headers.get('idempotent-replayed')).toBeNull();
    const replay = await m.send(bank, key, { account, amount: 300, currency: 'EUR' });
    expect(replay.text).toBe(original.text);
    expect(rowsOf(bank, m, key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(5_000 + m.sign * 300);
  });

  it('answers 422 account_not_found for an unknown account, stored and replayed, leaving a declined row', async () => {
    const key = uniqueKey(m.name);
    const body = { account: 'acc_nobody', amount: 10, currency: 'EUR' };

    const first = await m.send(bank, key, body);
    const replay = await m.send(bank, key, body);

    expectProblem(first, 422, 'account_not_found');
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expectProblem(replay, 422, 'account_not_found');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(rowsOf(bank, m, key)).toEqual([{ status: 'declined', amount: 10, id: null }]);
    expect((await viewOf(bank, m, key)).body).toMatchObject({
      key,
      [m.idField]: null,
      account: 'acc_nobody',
      status: 'declined',
    });
  });

  it('answers 422 currency_mismatch when the account holds another currency, balance unchanged', async () => {
    const account = await bank.openAccount(5_000, 'USD');
    const key = uniqueKey(m.name);
    const body = { account, amount: 10, currency: 'EUR' };

    const first = await m.send(bank, key, body);
    const replay = await m.send(bank, key, body);

    const problem = expectProblem(first, 422, 'currency_mismatch');
    expect(problem.detail).toBe(`account ${account} holds USD, not EUR`);
    expectProblem(replay, 422, 'currency_mismatch');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(5_000);
    expect(rowsOf(bank, m, key)).toEqual([{ status: 'declined', amount: 10, id: null }]);
  });

  it('after a validation error the key is still unused', async () => {
    const account = await bank.openAccount(5_000);
    const key = uniqueKey(m.name);
    for (const amount of ['1250', 12.5]) {
      expectProblem(await m.send(bank, key, { account, amount, currency: 'EUR' }), 400, 'invalid_request');
      expect(bank.keyRows(key)).toBe(0);
    }

    const good = await m.send(bank, key, { account, amount: 1250, currency: 'EUR' });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBe('false');
  });
});

describe.each(MOVEMENTS)('POST /$collection/{key}/reverse', (m) => {
  const reverse = (key: string) => bank.reverse(m.collection, key);

  it('gives the money back once: reversing twice gives the same answer and one reversal', async () => {
    const account = await bank.openAccount(10_000);
    const key = uniqueKey(m.name);
    const moved = await m.send(bank, key, { account, amount: 4_000, currency: 'EUR' });
    expect(bank.balance(account)).toBe(10_000 + m.sign * 4_000);

    const first = await reverse(key);
    const second = await reverse(key);

    expect(first.status).toBe(200);
    expect(first.body).toEqual({ key, [m.idField]: moved.body.id, status: 'reversed', [m.undone]: 4_000 });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(bank.balance(account)).toBe(10_000);
    expect(rowsOf(bank, m, key)).toEqual([{ status: 'reversed', amount: 4_000, id: moved.body.id }]);
    const after = await viewOf(bank, m, key);
    expect(after.body).toMatchObject({ key, [m.idField]: moved.body.id, status: 'reversed', amount: 4_000 });
    expect(new Date(String(after.body.reversedAt)).toISOString()).toBe(after.body.reversedAt);
  });

  it(`the original ${m.name}, retried after its reversal, replays its 201 and moves nothing again`, async () => {
    const account = await bank.openAccount(1_000);
    const key = uniqueKey(m.name);
    const body = { account, amount: 250, currency: 'EUR' };
    const moved = await m.send(bank, key, body);
    await reverse(key);

    const retry = await m.send(bank, key, body);

    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(moved.text);
    expect(bank.balance(account)).toBe(1_000);
  });

  it('fences a key with nothing moved, so the late original is refused 410 forever and moves no money', async () => {
    const account = await bank.openAccount(10_000);
    const key = uniqueKey(m.name);
    const fencedCode = `${m.name}_fenced`;

    const fenced = await reverse(key);
    expect(fenced.status).toBe(200);
    expect(fenced.body).toEqual({ key, [m.idField]: null, status: 'fenced', [m.undone]: 0 });

    const late = await m.send(bank, key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(late, 410, fencedCode);
    expect(late.headers.get('idempotent-replayed')).toBe('false');
    const again = await m.send(bank, key, { account, amount: 1_000, currency: 'EUR' });
    expectProblem(again, 410, fencedCode);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(10_000);
    expect((await reverse(key)).body).toEqual({ key, [m.idField]: null, status: 'fenced', [m.undone]: 0 });
    expect(rowsOf(bank, m, key)).toEqual([{ status: 'fenced', amount: null, id: null }]);
    expect((await viewOf(bank, m, key)).body).toEqual({
      key,
      [m.idField]: null,
      account: null,
      amount: null,
      currency: null,
      status: 'fenced',
      createdAt: expect.any(String),
      reversedAt: null,
    });
  });

  it(`when the ${m.name} was declined, answers declined with nothing given back`, async () => {
    const account = await bank.openAccount(100, 'USD');
    const key = uniqueKey(m.name);
    expectProblem(await m.send(bank, key, { account, amount: 10, currency: 'EUR' }), 422, 'currency_mismatch');

    const res = await reverse(key);

    expect(res.body).toEqual({ key, [m.idField]: null, status: 'declined', [m.undone]: 0 });
    expect(rowsOf(bank, m, key)).toEqual([{ status: 'declined', amount: 10, id: null }]);
    expect(bank.balance(account)).toBe(100);
  });

  it('accepts no body, an empty JSON body and {}; a key with slashes is one key, encoded in the path or not', async () => {
    const key = uniqueKey(m.name);
    const url = `/${m.collection}/${encodeURIComponent(key)}/reverse`;
    const none = await bank.call('POST', url);
    const empty = await bank.call('POST', url, { raw: '', headers: { 'content-type': 'application/json' } });
    const object = await bank.call('POST', url, { body: {} });
    const raw = await bank.call('POST', `/${m.collection}/${key}/reverse`);
    for (const res of [none, empty, object, raw]) {
      expect(res.body).toEqual({ key, [m.idField]: null, status: 'fenced', [m.undone]: 0 });
    }
    expect(rowsOf(bank, m, key)).toHaveLength(1);
  });

  it('finds a key with slashes whether the path encodes it or not, to read it and to reverse it', async () => {
    const account = await bank.openAccount(1_000);
    const key = uniqueKey(m.name);
    const moved = await m.send(bank, key, { account, amount: 10, currency: 'EUR' });

    const encoded = await viewOf(bank, m, key);
    const raw = await bank.call('GET', `/${m.collection}/${key}`);
    expect(encoded.status).toBe(200);
    expect(encoded.body).toMatchObject({ key, [m.idField]: moved.body.id, status: m.done });
    expect(raw.body).toEqual(encoded.body);

    const reversed = await bank.call('POST', `/${m.collection}/${key}/reverse`);
    expect(reversed.body).toMatchObject({ key, status: 'reversed', [m.undone]: 10 });
    expect(bank.balance(account)).toBe(1_000);
  });

  it('a key ending in /reverse is still one key; one of 512 characters fits in the path', async () => {
    const key = `${uniqueKey(m.name)}/reverse`;
    const res = await reverse(key);
    expect(res.body).toMatchObject({ key, status: 'fenced' });
    expect(rowsOf(bank, m, key)).toHaveLength(1);

    const long = `k/${m.name}/${'x'.repeat(510 - m.name.length - 1)}`;
    expect(long).toHaveLength(512);
    const fenced = await reverse(long);
    expect(fenced.status).toBe(200);
    expect(fenced.body).toMatchObject({ key: long, status: 'fenced' });
  });

  it(`an unknown key is 404 ${m.name}_not_found; a bad key is 400; a POST that is not a reversal is 404`, async () => {
    expectProblem(await viewOf(bank, m, uniqueKey(m.name)), 404, `${m.name}_not_found`);
    expectProblem(await bank.call('GET', `/${m.collection}/%E2%82%AC`), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('GET', `/${m.collection}/%ZZ`), 400, 'invalid_request');
    expectProblem(await bank.call('POST', `/${m.collection}/${'k'.repeat(513)}/reverse`), 400, 'idempotency_key_invalid');
    expectProblem(await bank.call('POST', `/${m.collection}/%ZZ/reverse`), 400, 'invalid_request');
    expectProblem(await bank.call('POST', `/${m.collection}/${encodeURIComponent(uniqueKey(m.name))}`), 404, 'not_found');
    expectProblem(await bank.call('POST', `/${m.collection}//reverse`), 404, 'not_found');
  });
});
