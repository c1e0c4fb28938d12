// What each injected fault does to the bank's movements (movements.ts), charges and credits
// alike, and to their reversals: a lost answer leaves the effect committed once for the retry
// to find, a failure before commit leaves nothing, a bank that is down refuses the
// connection but still answers reads, and a delayed key is answered 409 to a second
// request. What the fault switch itself does is shared with the reservation service
// (sandboxes/faults.unit.test.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { expectProblem, LOST_ANSWER, networkError, uniqueKey, useBank } from './helpers.js';
import { MOVEMENTS, rowsOf, viewOf } from './movements.js';

const bank = useBank({ faults: true });

/** Clears every fault, then sets these; returns a fresh account holding 10 000. */
async function fresh(faults: Record<string, unknown> = {}): Promise<string> {
  const res = await bank.putFaults({ ...NO_FAULTS, ...faults });
  expect(res.status).toBe(200);
  return bank.openAccount(10_000);
}

describe.each(MOVEMENTS)('faults on $collection and their reversals', (m) => {
  const reverse = (key: string) => bank.reverse(m.collection, key);

  it(`when the answer to a ${m.name} is dropped after commit, it stands once and the retry replays it`, async () => {
    const account = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey(m.name);
    const body = { account, amount: 1_250, currency: 'EUR' };

    const lost = await networkError(m.send(bank, key, body));

    expect(lost).toMatch(LOST_ANSWER);
    expect(bank.balance(account)).toBe(10_000 + m.sign * 1_250);
    expect(rowsOf(bank, m, key)).toMatchObject([{ status: m.done, amount: 1_250 }]);
    // Still set to 1: only an answer that committed something is dropped, a replay is not.
    const retry = await m.send(bank, key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ key, amount: 1_250, status: m.done, id: rowsOf(bank, m, key)[0]!.id });
    expect(bank.balance(account)).toBe(10_000 + m.sign * 1_250);
  });

  it('drops a committed reversal too; the retried reversal answers the same, giving back once', async () => {
    const account = await fresh();
    const key = uniqueKey(m.name);
    const moved = await m.send(bank, key, { account, amount: 500, currency: 'EUR' });
    await bank.putFaults({ dropResponseAfterCommit: 1 });

    const lost = await networkError(reverse(key));
    const retry = await reverse(key);

    expect(lost).toMatch(LOST_ANSWER);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ key, [m.idField]: moved.body.id, status: 'reversed', [m.undone]: 500 });
    expect(bank.balance(account)).toBe(10_000);
  });

  it(`drops a committed fence; the retry still answers fenced and the late ${m.name} is refused`, async () => {
    const account = await fresh({ dropResponseAfterCommit: 1 });
    const key = uniqueKey(m.name);

    const lost = await networkError(reverse(key));
    const retry = await reverse(key);

    expect(lost).toMatch(LOST_ANSWER);
    expect(retry.body).toEqual({ key, [m.idField]: null, status: 'fenced', [m.undone]: 0 });
    await bank.putFaults({ dropResponseAfterCommit: 0 });
    expectProblem(await m.send(bank, key, { account, amount: 1, currency: 'EUR' }), 410, `${m.name}_fenced`);
    expect(rowsOf(bank, m, key)).toHaveLength(1);
    expect(bank.balance(account)).toBe(10_000);
  });

  it(`when failBeforeCommit fires, a ${m.name} and its reversal answer 503 injected_failure and do nothing; the key stays usable`, async () => {
    const account = await fresh({ failBeforeCommit: 1 });
    const key = uniqueKey(m.name);
    const body = { account, amount: 100, currency: 'EUR' };

    expectProblem(await m.send(bank, key, body), 503, 'injected_failure');
    expectProblem(await reverse(key), 503, 'injected_failure');

    expect(bank.balance(account)).toBe(10_000);
    expect(rowsOf(bank, m, key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    await bank.putFaults({ failBeforeCommit: 0 });
    const retry = await m.send(bank, key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
    expect(bank.balance(account)).toBe(10_000 + m.sign * 100);
  });

  it(`when down, a ${m.name} and its reversal get a connection error and nothing happens, while reads and set-up still answer`, async () => {
    const account = await fresh({ down: true });
    const key = uniqueKey(m.name);

    const moved = await networkError(m.send(bank, key, { account, amount: 100, currency: 'EUR' }));
    const reversed = await networkError(reverse(key));

    expect(moved).toMatch(LOST_ANSWER);
    expect(reversed).toMatch(LOST_ANSWER);
    expect((await bank.call('GET', '/healthz')).status).toBe(200);
    expect((await bank.call('GET', `/accounts/${account}`)).body).toMatchObject({ balance: 10_000 });
    expectProblem(await viewOf(bank, m, key), 404, `${m.name}_not_found`);
    expect((await bank.call('POST', '/accounts', { body: { id: 'acc_down', currency: 'EUR', balance: 1 } })).status).toBe(201);
    expect(rowsOf(bank, m, key)).toEqual([]);
    expect(bank.keyRows(key)).toBe(0);
    expect((await bank.putFaults({ down: false })).status).toBe(200);
    expect((await m.send(bank, key, { account, amount: 100, currency: 'EUR' })).status).toBe(201);
  });

  it(`delays a ${m.name} and its reversal but never the reads; a second request for a delayed key gets 409 request_in_progress`, async () => {
    const account = await fresh({ delayMs: 400 });
    const key = uniqueKey(m.name);
    const body = { account, amount: 100, currency: 'EUR' };

    const started = Date.now();
    const slow = m.send(bank, key, body);
    await sleep(100);
    const concurrent = await m.send(bank, key, body);
    const read = await bank.call('GET', `/accounts/${account}`);
    const view = await viewOf(bank, m, key);
    const readAt = Date.now() - started;
    const first = await slow;
    const reversal = await reverse(key);

    expectProblem(concurrent, 409, 'request_in_progress');
    expect(read.status).toBe(200);
    expectProblem(view, 404, `${m.name}_not_found`);
    expect(readAt).toBeLessThan(400);
    expect(first.status).toBe(201);
    expect(reversal.body).toMatchObject({ status: 'reversed', [m.undone]: 100 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    await bank.putFaults({ delayMs: 0 });
    const retry = await m.send(bank, key, body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(bank.balance(account)).toBe(10_000);
  });
});
