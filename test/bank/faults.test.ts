import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { expectProblem, sleep, startBank, uniqueKey, type Bank } from './helpers.js';

let bank: Bank;
beforeAll(async () => {
  bank = await startBank({ faults: true });
});
afterAll(async () => {
  await bank.close();
});

async function fresh(faults: Record<string, unknown> = {}) {
  const res = await bank.putFaults({ ...NO_FAULTS, ...faults });
  expect(res.status).toBe(200);
  const id = `acc_${Math.random().toString(36).slice(2)}`;
  await bank.call('POST', '/accounts', { body: { id, currency: 'EUR', balance: 10_000 } });
  return id;
}

/** The network-level failure a client sees, or undefined when an answer came back. */
async function networkError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? String(err);
  }
}

describe('fault injection (SANDBOX_FAULTS=1)', () => {
  it('PUT /_faults changes only the fields sent; GET shows the current faults; bad fields are 400', async () => {
    await fresh();
    const put = await bank.putFaults({ delayMs: 5 });
    expect(put.body).toEqual({ dropResponseAfterCommit: 0, crashAfterCommit: 0, failBeforeCommit: 0, delayMs: 5, down: false });
    await bank.putFaults({ failBeforeCommit: 0.25 });
    expect((await bank.call('GET', '/_faults')).body).toEqual({
      dropResponseAfterCommit: 0,
      crashAfterCommit: 0,
      failBeforeCommit: 0.25,
      delayMs: 5,
      down: false,
    });
    expectProblem(await bank.putFaults({ dropResponse: 1 }), 400, 'invalid_request');
    expectProblem(await bank.putFaults({ failBeforeCommit: 1.5 }), 400, 'invalid_request');
    expectProblem(await bank.putFaults({ crashAfterCommit: -0.1 }), 400, 'invalid_request');
    expectProblem(await bank.putFaults({ delayMs: 120_001 }), 400, 'invalid_request');
    expectProblem(await bank.putFaults({ down: 'yes' }), 400, 'invalid_request');
    expect((await bank.call('GET', '/_faults')).body).toMatchObject({ failBeforeCommit: 0.25, delayMs: 5 });
  });

  it('when the response is dropped after commit, the client sees a network error, the charge stands, and the retry replays it', async () => {
    const account = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey();
    const body = { account, amount: 1_250, currency: 'EUR' };

    const lost = await networkError(bank.charge(key, body));

    expect(lost).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(bank.balance(account)).toBe(8_750);
    expect(bank.chargeRows(key)).toMatchObject([{ status: 'captured', amount: 1_250 }]);
    // Still set to 1: only an answer that committed something is dropped, a replay is not.
    const retry = await bank.charge(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ key, amount: 1_250, status: 'captured', id: bank.chargeRows(key)[0]!.charge_id });
    expect(bank.balance(account)).toBe(8_750);
  });

  it('drops a committed reversal too; the retried reversal answers the same, refunding once', async () => {
    const account = await fresh();
    const key = uniqueKey();
    await bank.charge(key, { account, amount: 500, currency: 'EUR' });
    await bank.putFaults({ dropResponseAfterCommit: 1 });

    const lost = await networkError(bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`));
    const retry = await bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);

    expect(lost).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(retry.body).toMatchObject({ key, status: 'reversed', refunded: 500 });
    expect(bank.balance(account)).toBe(10_000);
  });

  it('when failBeforeCommit fires, answers 503 injected_failure and does nothing; the key stays usable', async () => {
    const account = await fresh({ failBeforeCommit: 1 });
    const key = uniqueKey();
    const body = { account, amount: 100, currency: 'EUR' };

    const failed = await bank.charge(key, body);
    const failedReverse = await bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`);

    expectProblem(failed, 503, 'injected_failure');
    expectProblem(failedReverse, 503, 'injected_failure');
    expect(bank.balance(account)).toBe(10_000);
    expect(bank.chargeRows(key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    await bank.putFaults({ failBeforeCommit: 0 });
    const retry = await bank.charge(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
  });

  it('when down, effect requests get a connection error and nothing happens, while reads and set-up still answer', async () => {
    const account = await fresh({ down: true });
    const key = uniqueKey();

    const charge = await networkError(bank.charge(key, { account, amount: 100, currency: 'EUR' }));
    const reverse = await networkError(bank.call('POST', `/charges/${encodeURIComponent(key)}/reverse`));

    expect(charge).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(reverse).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect((await bank.call('GET', '/healthz')).status).toBe(200);
    expect((await bank.call('GET', `/accounts/${account}`)).body).toMatchObject({ balance: 10_000 });
    expect((await bank.call('POST', '/accounts', { body: { id: 'acc_down', currency: 'EUR', balance: 1 } })).status).toBe(201);
    expect(bank.chargeRows(key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    expect((await bank.putFaults({ down: false })).status).toBe(200);
    expect((await bank.charge(key, { account, amount: 100, currency: 'EUR' })).status).toBe(201);
  });

  it('while a key is delayed in flight, a second request for it gets 409 request_in_progress', async () => {
    const account = await fresh({ delayMs: 400 });
    const key = uniqueKey();
    const body = { account, amount: 100, currency: 'EUR' };

    const started = Date.now();
    const slow = bank.charge(key, body);
    await sleep(100);
    const concurrent = await bank.charge(key, body);
    const read = await bank.call('GET', `/accounts/${account}`);
    const readAt = Date.now() - started;
    const first = await slow;

    expectProblem(concurrent, 409, 'request_in_progress');
    expect(read.status).toBe(200);
    expect(readAt).toBeLessThan(400); // reads are never delayed
    expect(first.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    await bank.putFaults({ delayMs: 0 });
    const retry = await bank.charge(key, body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(9_900);
  });

  it('draws fault probabilities from the injected random source', async () => {
    const draws = [0.5, 0.2];
    const seeded = await startBank({ faults: true, random: () => draws.shift() ?? 0.99 });
    try {
      await seeded.putFaults({ dropResponseAfterCommit: 0.3 });
      const kept = await seeded.charge(uniqueKey(), { account: 'acc_alice', amount: 1, currency: 'EUR' }); // draws 0.5
      const dropped = await networkError(seeded.charge(uniqueKey(), { account: 'acc_alice', amount: 1, currency: 'EUR' })); // 0.2
      expect(kept.status).toBe(201);
      expect(dropped).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
      expect(seeded.balance('acc_alice')).toBe(1_000_000 - 2);
    } finally {
      await seeded.close();
    }
  });
});

describe('fault injection on credits and their reversals', () => {
  it('when the response to a credit is dropped after commit, the credit stands once and the retry replays it', async () => {
    const account = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey('credit');
    const body = { account, amount: 600, currency: 'EUR' };

    const lost = await networkError(bank.credit(key, body));

    expect(lost).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(bank.balance(account)).toBe(10_600);
    expect(bank.creditRows(key)).toMatchObject([{ status: 'credited', amount: 600 }]);
    const retry = await bank.credit(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ key, amount: 600, status: 'credited', id: bank.creditRows(key)[0]!.credit_id });
    expect(bank.balance(account)).toBe(10_600);
  });

  it('drops a committed credit reversal too; the retried reversal answers the same, taking back once', async () => {
    const account = await fresh();
    const key = uniqueKey('credit');
    const credited = await bank.credit(key, { account, amount: 500, currency: 'EUR' });
    await bank.putFaults({ dropResponseAfterCommit: 1 });

    const lost = await networkError(bank.reverse('credits', key));
    const retry = await bank.reverse('credits', key);

    expect(lost).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ key, creditId: credited.body.id, status: 'reversed', reclaimed: 500 });
    expect(bank.balance(account)).toBe(10_000);
  });

  it('drops a committed fence; the retry still answers fenced and the late credit is refused', async () => {
    const account = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey('credit');

    const lost = await networkError(bank.reverse('credits', key));
    const retry = await bank.reverse('credits', key);

    expect(lost).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(retry.body).toEqual({ key, creditId: null, status: 'fenced', reclaimed: 0 });
    await bank.putFaults({ dropResponseAfterCommit: 0 });
    expectProblem(await bank.credit(key, { account, amount: 1, currency: 'EUR' }), 410, 'credit_fenced');
    expect(bank.creditRows(key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(10_000);
  });

  it('when failBeforeCommit fires, a credit and a credit reversal answer 503 and do nothing; the key stays usable', async () => {
    const account = await fresh({ failBeforeCommit: 1 });
    const key = uniqueKey('credit');
    const body = { account, amount: 100, currency: 'EUR' };

    expectProblem(await bank.credit(key, body), 503, 'injected_failure');
    expectProblem(await bank.reverse('credits', key), 503, 'injected_failure');

    expect(bank.balance(account)).toBe(10_000);
    expect(bank.creditRows(key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    await bank.putFaults({ failBeforeCommit: 0 });
    const retry = await bank.credit(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
    expect(bank.balance(account)).toBe(10_100);
  });

  it('when down, credits and credit reversals get a connection error and nothing happens; reads still answer', async () => {
    const account = await fresh({ down: true });
    const key = uniqueKey('credit');

    const credit = await networkError(bank.credit(key, { account, amount: 100, currency: 'EUR' }));
    const reverse = await networkError(bank.reverse('credits', key));

    expect(credit).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(reverse).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expectProblem(await bank.call('GET', `/credits/${encodeURIComponent(key)}`), 404, 'credit_not_found');
    expect(bank.creditRows(key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    await bank.putFaults({ down: false });
    expect((await bank.credit(key, { account, amount: 100, currency: 'EUR' })).status).toBe(201);
  });

  it('delays credits and their reversals but never their reads; a second request for a delayed key gets 409', async () => {
    const account = await fresh({ delayMs: 400 });
    const key = uniqueKey('credit');
    const body = { account, amount: 100, currency: 'EUR' };

    const started = Date.now();
    const slow = bank.credit(key, body);
    await sleep(100);
    const concurrent = await bank.credit(key, body);
    const read = await bank.call('GET', `/credits/${encodeURIComponent(key)}`);
    const readAt = Date.now() - started;
    const first = await slow;
    const reversal = await bank.reverse('credits', key);

    expectProblem(concurrent, 409, 'request_in_progress');
    expectProblem(read, 404, 'credit_not_found');
    expect(readAt).toBeLessThan(400);
    expect(first.status).toBe(201);
    expect(reversal.body).toMatchObject({ status: 'reversed', reclaimed: 100 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect(bank.balance(account)).toBe(10_000);
  });
});

describe('shutting down', () => {
  it('ends injected delays at once with 503 shutting_down, nothing charged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysafe-bank-'));
    const closing = await startBank({ faults: true, dir });
    await closing.putFaults({ delayMs: 60_000 });
    const key = uniqueKey();
    const started = Date.now();
    const slow = closing.charge(key, { account: 'acc_alice', amount: 1, currency: 'EUR' });
    await sleep(100);

    await closing.close();

    expectProblem(await slow, 503, 'shutting_down');
    expect(Date.now() - started).toBeLessThan(5_000);
    const db = openDatabase(closing.dbPath);
    try {
      expect(db.prepare('SELECT balance FROM accounts WHERE id = ?').get('acc_alice')).toEqual({ balance: 1_000_000 });
      expect(db.prepare('SELECT count(*) AS n FROM charges WHERE key = ?').get(key)).toEqual({ n: 0 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('without SANDBOX_FAULTS', () => {
  it('has no /_faults routes', async () => {
    const plain = await startBank({ faults: false });
    try {
      expectProblem(await plain.call('GET', '/_faults'), 404, 'not_found');
      expectProblem(await plain.putFaults({ down: true }), 404, 'not_found');
      expect((await plain.charge(uniqueKey(), { account: 'acc_alice', amount: 1, currency: 'EUR' })).status).toBe(201);
    } finally {
      await plain.close();
    }
  });
});
