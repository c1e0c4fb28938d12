// Unit tests of the shared idempotent executor's decisions, on a real SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import { IdempotentExecutor, requestFingerprint } from '../../downstream/shared/idempotency.js';
import { requireKey } from '../../downstream/shared/idempotency-key.js';

let dir: string;
let db: Database.Database;
let executor: IdempotentExecutor;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'retrysafe-exec-'));
  db = openDatabase(join(dir, 'x.db'));
  db.exec('CREATE TABLE effects (n INTEGER)');
  executor = new IdempotentExecutor(db, { ttlMs: 60_000 });
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const effects = () => (db.prepare('SELECT count(*) AS n FROM effects').get() as { n: number }).n;
const keys = () => (db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
const insertEffect = () => db.prepare('INSERT INTO effects VALUES (1)').run();

describe('IdempotentExecutor', () => {
  it('when the effect throws, neither the effect nor the key survives', async () => {
    const run = executor.execute({
      key: 'k',
      endpoint: 'POST /x',
      body: {},
      effect: () => {
        insertEffect();
        throw new Error('bug');
      },
    });
    await expect(run).rejects.toThrow('bug');
    expect(effects()).toBe(0);
    expect(keys()).toBe(0);
    expect(executor.inFlight.size).toBe(0);
  });

  it('when beforeCommit fails, nothing runs and the key is released', async () => {
    let ran = false;
    const run = executor.execute({
      key: 'k',
      endpoint: 'POST /x',
      body: {},
      effect: () => {
        ran = true;
        return { status: 201, body: {} };
      },
      beforeCommit: async () => {
        throw new Error('injected');
      },
    });
    await expect(run).rejects.toThrow('injected');
    expect(ran).toBe(false);
    expect(executor.inFlight.has('k')).toBe(false);
  });

  it('stores business errors as problem documents and replays them byte for byte', async () => {
    const request = {
      key: 'k',
      endpoint: 'POST /x',
      body: { a: 1 },
      effect: () => {
        insertEffect();
        return { status: 402, body: { code: 'insufficient_funds' } };
      },
    };
    const first = await executor.execute(request);
    const again = await executor.execute(request);
    expect(first).toMatchObject({ status: 402, contentType: 'application/problem+json', replayed: false });
    expect(again).toEqual({ ...first, replayed: true });
    expect(effects()).toBe(1);
  });

  it('the same key on another endpoint is a different request (422)', async () => {
    const effect = () => ({ status: 201, body: {} });
    await executor.execute({ key: 'k', endpoint: 'POST /x', body: {}, effect });
    await expect(executor.execute({ key: 'k', endpoint: 'POST /y', body: {}, effect })).rejects.toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
  });
});

describe('requestFingerprint', () => {
  it('ignores key order and number spelling, not values or the endpoint', () => {
    const a = requestFingerprint('POST /charges', { account: 'a', amount: 10, currency: 'EUR' });
    expect(requestFingerprint('POST /charges', JSON.parse('{"currency":"EUR","amount":10.0,"account":"a"}'))).toBe(a);
    expect(requestFingerprint('POST /charges', { account: 'a', amount: 11, currency: 'EUR' })).not.toBe(a);
    expect(requestFingerprint('POST /other', { account: 'a', amount: 10, currency: 'EUR' })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it("keeps the hashes already stored in the sandboxes' key rows", () => {
    expect(requestFingerprint('POST /charges', { account: 'acc_alice', amount: 1250, currency: 'EUR' })).toBe(
      'bc64010dfae9ae3890b9a53b9b7bcd3aee444dd248c0f25e93e776de637da36a',
    );
    expect(requestFingerprint('POST /reservations', { items: [{ sku: 'sku_book', quantity: 2 }], ttlSeconds: 900 })).toBe(
      '9513ad54710c0cc9833785dd2fdcfab13358788dd0876860d38b8b339cd8b732',
    );
    expect(requestFingerprint('POST /x', undefined)).toBe('5c067dcb6a24fe7f4d893f7963da06edb5c2b97bc0e9e211a8320d66d4cba3f2');
  });
});

describe('the Idempotency-Key header on the receiving side (up to 512 characters)', () => {
  it.each([
    ['abc', 'abc'],
    ['"abc"', 'abc'],
    ['  "a b"  ', 'a b'],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ['acme/order-42/charge', 'acme/order-42/charge'],
  ])('%s → %s', (header, key) => {
    expect(requireKey(header)).toBe(key);
  });

  it.each([[''], ['a b'], ['"abc'], ['"é"'], ['é'], ['"abc";p=1'], [['a', 'b']], ['x'.repeat(513)]])(
    '%j → idempotency_key_invalid',
    (header) => {
      expect(() => requireKey(header)).toThrow(expect.objectContaining({ code: 'idempotency_key_invalid' }));
    },
  );

  it('absent → idempotency_key_missing', () => {
    expect(() => requireKey(undefined)).toThrow(expect.objectContaining({ code: 'idempotency_key_missing', status: 400 }));
  });
});
