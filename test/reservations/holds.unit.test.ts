import { describe, expect, it } from 'vitest';
import { expectProblem, startReservations, uniqueKey, useReservations } from './helpers.js';

const rsv = useReservations();

describe('POST /reservations', () => {
  it('holds once per key: run twice, one hold, the retry replays the stored 201', async () => {
    const sku = await rsv.newSku(10);
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 3 }], ttlSeconds: 600 };

    const first = await rsv.hold(key, body);
    const second = await rsv.hold(key, body);

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toMatchObject({ key, items: [{ sku, quantity: 3 }], status: 'held' });
    expect(first.body.id).toMatch(/^rsv_[0-9a-f]{24}$/);
    const createdAt = String(first.body.createdAt);
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
    expect(Date.parse(String(first.body.expiresAt)) - Date.parse(createdAt)).toBe(600_000);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(rsv.rows(key)).toEqual([{ status: 'held', reservation_id: first.body.id, decline_code: null }]);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 3 });
  });

  it('holds for 900 s by default, and an explicit ttlSeconds of 900 is the same request', async () => {
    const sku = await rsv.newSku(5);
    const key = uniqueKey();
    const first = await rsv.hold(key, { items: [{ sku, quantity: 1 }] });
    const spelled = await rsv.hold(key, { items: [{ sku, quantity: 1 }], ttlSeconds: 900 });

    expect(Date.parse(String(first.body.expiresAt)) - Date.parse(String(first.body.createdAt))).toBe(900_000);
    expect(spelled.headers.get('idempotent-replayed')).toBe('true');
    expect(spelled.text).toBe(first.text);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 4, held: 1 });
  });

  it('treats the Structured Field form "k" and the bare form k as the same key', async () => {
    const sku = await rsv.newSku(5);
    const key = uniqueKey();
    const quoted = await rsv.call('POST', '/reservations', { key: `"${key}"`, body: { items: [{ sku, quantity: 1 }] } });
    const bare = await rsv.hold(key, { items: [{ sku, quantity: 1 }] });
    expect(quoted.status).toBe(201);
    expect(bare.headers.get('idempotent-replayed')).toBe('true');
    expect(bare.body.id).toBe(quoted.body.id);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 4, held: 1 });
  });

  it('holds every item or none, summing lines that name the same SKU', async () => {
    const book = await rsv.newSku(10);
    const pen = await rsv.newSku(10);
    const key = uniqueKey();
    const items = [
      { sku: book, quantity: 2 },
      { sku: pen, quantity: 4 },
      { sku: book, quantity: 3 },
    ];
    const res = await rsv.hold(key, { items });
    expect(res.status).toBe(201);
    expect(res.body.items).toEqual(items);
    expect(await rsv.stock(book)).toEqual({ sku: book, available: 5, held: 5 });
    expect(await rsv.stock(pen)).toEqual({ sku: pen, available: 6, held: 4 });

    // 3 + 3 of `book` exceed the 5 left although each line alone fits: nothing is held.
    const tooMuch = await rsv.hold(uniqueKey(), {
      items: [
        { sku: pen, quantity: 1 },
        { sku: book, quantity: 3 },
        { sku: book, quantity: 3 },
      ],
    });
    const problem = expectProblem(tooMuch, 422, 'out_of_stock');
    expect(problem.shortages).toEqual([{ sku: book, requested: 6, available: 5 }]);
    expect(await rsv.stock(book)).toEqual({ sku: book, available: 5, held: 5 });
    expect(await rsv.stock(pen)).toEqual({ sku: pen, available: 6, held: 4 });
  });

  it('concurrent duplicates hold once and all successes carry the same reservation', async () => {
    const sku = await rsv.newSku(100);
    const key = uniqueKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => rsv.hold(key, { items: [{ sku, quantity: 7 }] })));
    const ok = answers.filter((a) => a.status === 201);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    expect(ok.filter((a) => a.headers.get('idempotent-replayed') === 'false')).toHaveLength(1);
    expect(rsv.rows(key)).toHaveLength(1);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 93, held: 7 });
  });

  it('different keys racing for scarce stock: exactly what is there gets held, the rest is out_of_stock', async () => {
    const sku = await rsv.newSku(3);
    const answers = await Promise.all(Array.from({ length: 10 }, () => rsv.hold(uniqueKey(), { items: [{ sku, quantity: 1 }] })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    for (const a of answers.filter((x) => x.status !== 201)) expectProblem(a, 422, 'out_of_stock');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 0, held: 3 });
  });

  it('refuses the same key with a different body (422 idempotency_key_reused) and holds nothing new', async () => {
    const sku = await rsv.newSku(10);
    const key = uniqueKey();
    const original = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });

    const changed = await rsv.hold(key, { items: [{ sku, quantity: 3 }] });
    const otherTtl = await rsv.hold(key, { items: [{ sku, quantity: 2 }], ttlSeconds: 60 });

    expectProblem(changed, 422, 'idempotency_key_reused');
    expectProblem(otherTtl, 422, 'idempotency_key_reused');
    expect(changed.headers.get('idempotent-replayed')).toBeNull();
    const replay = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });
    expect(replay.text).toBe(original.text);
    expect(rsv.rows(key)).toHaveLength(1);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 8, held: 2 });
  });

  it('when stock is short, answers 422 out_of_stock, holds nothing, stores it and replays it even after a restock', async () => {
    const sku = await rsv.newSku(2);
    const key = uniqueKey();
    const body = { items: [{ sku, quantity: 5 }] };

    const first = await rsv.hold(key, body);
    const problem = expectProblem(first, 422, 'out_of_stock');
    expect(problem.shortages).toEqual([{ sku, requested: 5, available: 2 }]);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 2, held: 0 });

    await rsv.call('PUT', `/inventory/${sku}`, { body: { available: 50 } });
    const replay = await rsv.hold(key, body);

    expectProblem(replay, 422, 'out_of_stock');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 50, held: 0 });
    expect(rsv.rows(key)).toEqual([{ status: 'declined', reservation_id: null, decline_code: 'out_of_stock' }]);
    expect((await rsv.view(key)).body).toMatchObject({
      key,
      reservationId: null,
      status: 'declined',
      items: body.items,
      expiresAt: null,
    });
  });

  it('answers 422 unknown_sku naming the SKU, stored and replayed, with nothing held for the known ones', async () => {
    const known = await rsv.newSku(10);
    const key = uniqueKey();
    const body = {
      items: [
        { sku: known, quantity: 1 },
        { sku: 'sku_never_stocked', quantity: 1 },
      ],
    };

    const first = await rsv.hold(key, body);
    const replay = await rsv.hold(key, body);

    expect(expectProblem(first, 422, 'unknown_sku').skus).toEqual(['sku_never_stocked']);
    expectProblem(replay, 422, 'unknown_sku');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await rsv.stock(known)).toEqual({ sku: known, available: 10, held: 0 });
    expect(rsv.rows(key)).toEqual([{ status: 'declined', reservation_id: null, decline_code: 'unknown_sku' }]);
  });

  it('after a validation error the key is still unused', async () => {
    const sku = await rsv.newSku(10);
    const key = uniqueKey();
    expectProblem(await rsv.hold(key, { items: [{ sku, quantity: '2' }] }), 400, 'invalid_request');
    expect(rsv.keyRows(key)).toBe(0);

    const good = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBe('false');
  });
});

describe('inventory', () => {
  it('stocks the demo SKUs on first start', async () => {
    const fresh = await startReservations();
    try {
      expect(await fresh.stock('sku_book')).toEqual({ sku: 'sku_book', available: 100, held: 0 });
      expect(await fresh.stock('sku_pen')).toEqual({ sku: 'sku_pen', available: 1000, held: 0 });
      expect(await fresh.stock('sku_rare')).toEqual({ sku: 'sku_rare', available: 1, held: 0 });
    } finally {
      await fresh.close();
    }
  });

  it('PUT /inventory sets what can still be reserved and leaves holds alone; GET of an unknown SKU is 404 unknown_sku', async () => {
    const sku = await rsv.newSku(10);
    await rsv.hold(uniqueKey(), { items: [{ sku, quantity: 4 }] });

    const put = await rsv.call('PUT', `/inventory/${sku}`, { body: { available: 20 } });

    expect(put.status).toBe(200);
    expect(put.body).toEqual({ sku, available: 20, held: 4 });
    expect(await rsv.stock(sku)).toEqual({ sku, available: 20, held: 4 });
    expect((await rsv.call('PUT', `/inventory/${sku}`, { body: { available: 0 } })).body).toEqual({ sku, available: 0, held: 4 });
    expectProblem(await rsv.call('GET', '/inventory/sku_nobody'), 404, 'unknown_sku');
  });

  it('an unknown route → 404 not_found problem', async () => {
    expectProblem(await rsv.call('GET', '/nope'), 404, 'not_found');
    expectProblem(await rsv.call('DELETE', '/inventory/sku_book'), 404, 'not_found');
    expectProblem(await rsv.call('POST', `/reservations/${encodeURIComponent(uniqueKey())}`), 404, 'not_found');
    expectProblem(await rsv.call('POST', `/reservations/${encodeURIComponent(uniqueKey())}/cancel`), 404, 'not_found');
  });
});
