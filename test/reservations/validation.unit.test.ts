import { describe, expect, it } from 'vitest';
import { expectProblem, uniqueKey, useReservations } from './helpers.js';

const rsv = useReservations();

const good = { items: [{ sku: 'sku_pen', quantity: 1 }] };

describe('the Idempotency-Key header', () => {
  it('missing → 400 idempotency_key_missing, nothing held', async () => {
    expectProblem(await rsv.call('POST', '/reservations', { body: good }), 400, 'idempotency_key_missing');
    expect(await rsv.stock('sku_pen')).toMatchObject({ held: 0 });
  });

  it('a 512-character key holds and releases by its path', async () => {
    const max = `${uniqueKey()}/`.padEnd(512, 'x');
    expect((await rsv.hold(max, good)).status).toBe(201);
    expect((await rsv.release(max)).body).toMatchObject({ key: max, status: 'released' });
  });
});

describe('the hold body', () => {
  const item = (quantity: unknown) => ({ items: [{ sku: 'sku_pen', quantity }] });
  it.each([
    ['a zero quantity', item(0), 'items.0.quantity'],
    ['a negative quantity', item(-1), 'items.0.quantity'],
    ['a fractional quantity', item(1.5), 'items.0.quantity'],
    ['a string quantity', item('2'), 'items.0.quantity'],
    ['a quantity over 1000', item(1001), 'items.0.quantity'],
    ['no items', { items: [] }, 'items'],
    ['101 items', { items: Array.from({ length: 101 }, () => ({ sku: 'sku_pen', quantity: 1 })) }, 'items'],
    ['a missing items field', { ttlSeconds: 60 }, 'items'],
    ['an unknown field', { ...good, note: 'x' }, 'note'],
    ['an unknown field in an item', { items: [{ sku: 'sku_pen', quantity: 1, price: 3 }] }, 'items.0.price'],
    ['an empty sku', { items: [{ sku: '', quantity: 1 }] }, 'items.0.sku'],
    ['a 129-character sku', { items: [{ sku: 's'.repeat(129), quantity: 1 }] }, 'items.0.sku'],
    ['a zero ttlSeconds', { ...good, ttlSeconds: 0 }, 'ttlSeconds'],
    ['a ttlSeconds over a day', { ...good, ttlSeconds: 86_401 }, 'ttlSeconds'],
    ['a string ttlSeconds', { ...good, ttlSeconds: '60' }, 'ttlSeconds'],
  ])('%s → 400 invalid_request naming the field, key unused', async (_name, body, field) => {
    const key = uniqueKey();
    const res = await rsv.hold(key, body);
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
    expect(rsv.keyRows(key)).toBe(0);
    expect(rsv.rows(key)).toEqual([]);
  });
});

describe('inventory set-up', () => {
  it.each([
    ['a negative available', { available: -1 }, 'available'],
    ['a fractional available', { available: 1.5 }, 'available'],
    ['a string available', { available: '5' }, 'available'],
    ['a missing available', {}, 'available'],
    ['an unknown field', { available: 1, held: 0 }, 'held'],
  ])('PUT /inventory with %s → 400 invalid_request, stock unchanged', async (_name, body, field) => {
    const sku = await rsv.newSku(7);
    const problem = expectProblem(await rsv.call('PUT', `/inventory/${sku}`, { body }), 400, 'invalid_request');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 0 });
  });

  it('PUT /inventory with a 129-character sku or no body → 400 invalid_request', async () => {
    expectProblem(await rsv.call('PUT', `/inventory/${'s'.repeat(129)}`, { body: { available: 1 } }), 400, 'invalid_request');
    expectProblem(await rsv.call('PUT', '/inventory/sku_x'), 400, 'invalid_request');
    expectProblem(await rsv.call('GET', '/inventory/sku_x'), 404, 'unknown_sku');
  });
});
