import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import { expectProblem, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank();
});
afterAll(async () => {
  await bank.close();
});

async function openAccount(balance: number, currency = 'EUR'): Promise<string> {
  const id = `acc_${Math.random().toString(36).slice(2)}`;
  const res = await bank.call('POST', '/accounts', { body: { id, currency, balance } });
  expect(res.status).toBe(201);
  return id;
}

describe('POST /charges', () => {
  it('charges once per key: run twice, one debit, the retry replays the stored 201', async () => {
    const account = await openAccount(10_000);
    const key = uniqueKey();
    const body = { account, amount: 1250, currency: 'EUR' };

    const first = await bank.charge(key, body);
    const second = await bank.charge(key, body);

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toMatchObject({ key, account, amount: 1250, currency: 'EUR', status: 'captured' });
    expect(first.body.id).toMatch(/^ch_[0-9a-f]{24}$/);
    expect(new Date(String(first.body.createdAt)).toISOString()).toBe(first.body.createdAt);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(bank.chargeRows(key)).toEqual([{ status: 'captured', amount: 1250, charge_id: first.body.id }]);
    expect(bank.balance(account)).toBe(10_000 - 1250);
  });

  it('treats the Structured Field form "k" and the bare form k as the same key', async () => {
    const account = await openAccount(5_000);
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
    const account = await openAccount(5_000);
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

  it('concurrent duplicates move money once and all successes carry the same charge', async () => {
    const account = await openAccount(100_000);
    const key = uniqueKey();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => bank.charge(key, { account, amount: 700, currency: 'EUR' })),
    );
    const ok = answers.filter((a) => a.status === 201);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    expect(ok.filter((a) => a.headers.get('idempotent-replayed') === 'false')).toHaveLength(1);
    expect(bank.chargeRows(key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(100_000 - 700);
  });

  it('refuses the same key with a different body (422 idempotency_key_reused) and stores nothing new', async () => {
    const account = await openAccount(5_000);
    const key = uniqueKey();
    const original = await bank.charge(key, { account, amount: 300, currency: 'EUR' });

    const changed = await bank.charge(key, { account, amount: 301, currency: 'EUR' });

    expectProblem(changed, 422, 'idempotency_key_reused');
    expect(changed.headers.get('idempotent-replayed')).toBeNull();
    const replay = await bank.charge(key, { account, amount: 300, currency: 'EUR' });
    expect(replay.text).toBe(original.text);
    expect(bank.chargeRows(key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(4_700);
  });

  it('when the balance is short, answers 402 insufficient_funds, stores it and replays it even after a top-up', async () => {
    const account = await openAccount(2_000);
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
    expect(bank.chargeRows(key)).toEqual([{ status: 'declined', amount: 5_000, charge_id: null }]);
    const view = await bank.call('GET', `/charges/${encodeURIComponent(key)}`);
    expect(view.body).toMatchObject({ key, chargeId: null, status: 'declined', amount: 5_000 });
  });

  it('answers 422 account_not_found for an unknown account, stored and replayed', async () => {
    const key = uniqueKey();
    const body = { account: 'acc_nobody', amount: 10, currency: 'EUR' };
    const first = await bank.charge(key, body);
    const replay = await bank.charge(key, body);
    expectProblem(first, 422, 'account_not_found');
    expectProblem(replay, 422, 'account_not_found');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers 422 currency_mismatch when the account holds another currency, balance unchanged', async () => {
    const account = await openAccount(5_000, 'USD');
    const key = uniqueKey();
    const body = { account, amount: 10, currency: 'EUR' };
    const first = await bank.charge(key, body);
    const replay = await bank.charge(key, body);
    expectProblem(first, 422, 'currency_mismatch');
    expectProblem(replay, 422, 'currency_mismatch');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(5_000);
  });

  it('after a validation error the key is still unused', async () => {
    const account = await openAccount(5_000);
    const key = uniqueKey();
    const bad = await bank.charge(key, { account, amount: '1250', currency: 'EUR' });
    expectProblem(bad, 400, 'invalid_request');
    expect(bank.keyRows(key)).toBe(0);

    const good = await bank.charge(key, { account, amount: 1250, currency: 'EUR' });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBe('false');
  });

  it('when another process holds the write lock past busy_timeout, answers 409 and a retry succeeds', async () => {
    const impatient = await startBank({ busyTimeoutMs: 0 });
    const other = openDatabase(impatient.dbPath);
    try {
      const key = uniqueKey();
      const body = { account: 'acc_alice', amount: 5, currency: 'EUR' };
      other.exec('BEGIN IMMEDIATE');
      const blocked = await impatient.charge(key, body);
      expectProblem(blocked, 409, 'request_in_progress');
      // Reads never wait for the writer (WAL).
      expect((await impatient.call('GET', '/accounts/acc_alice')).status).toBe(200);
      other.exec('ROLLBACK');

      const retry = await impatient.charge(key, body);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('false');
      expect(impatient.balance('acc_alice')).toBe(1_000_000 - 5);
    } finally {
      other.close();
      await impatient.close();
    }
  });
});

describe('accounts and health', () => {
  it('GET /healthz answers ok', async () => {
    const res = await bank.call('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

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
