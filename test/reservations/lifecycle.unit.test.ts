import { describe, expect, it } from 'vitest';
import { expectProblem, uniqueKey, useReservations } from './helpers.js';

const rsv = useReservations();

async function held(available: number, quantity: number): Promise<{ sku: string; key: string; id: string }> {
  const sku = await rsv.newSku(available);
  const key = uniqueKey();
  const res = await rsv.hold(key, { items: [{ sku, quantity }] });
  expect(res.status).toBe(201);
  return { sku, key, id: String(res.body.id) };
}

describe('POST /reservations/{key}/confirm and /release', () => {
  it.each([
    { action: 'confirm', status: 'confirmed', stock: { available: 7, held: 0 }, doneAt: 'confirmedAt', notAt: 'releasedAt' },
    { action: 'release', status: 'released', stock: { available: 10, held: 0 }, doneAt: 'releasedAt', notAt: 'confirmedAt' },
  ] as const)(
    '$action acts on a hold once ($status); doing it again answers the same and moves no stock',
    async ({ action, status, stock, doneAt, notAt }) => {
      const { sku, key, id } = await held(10, 3);
      expect(await rsv.stock(sku)).toEqual({ sku, available: 7, held: 3 });

      const first = await rsv[action](key);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ key, reservationId: id, status });
      expect(await rsv.stock(sku)).toEqual({ sku, ...stock });

      const second = await rsv[action](key);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(await rsv.stock(sku)).toEqual({ sku, ...stock });

      const view = await rsv.view(key);
      expect(view.body).toMatchObject({ key, reservationId: id, status, [notAt]: null });
      expect(typeof view.body[doneAt]).toBe('string');
    },
  );
});

describe('POST /reservations/{key}/confirm', () => {
  it('refuses to confirm a released reservation (422 reservation_released), stock unchanged', async () => {
    const { sku, key } = await held(10, 3);
    await rsv.release(key);

    expectProblem(await rsv.confirm(key), 422, 'reservation_released');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
  });

  it('refuses to confirm a fenced key (422 reservation_released) and a declined one (422 reservation_declined)', async () => {
    const fenced = uniqueKey();
    await rsv.release(fenced);
    expectProblem(await rsv.confirm(fenced), 422, 'reservation_released');

    const sku = await rsv.newSku(1);
    const declined = uniqueKey();
    expectProblem(await rsv.hold(declined, { items: [{ sku, quantity: 2 }] }), 422, 'out_of_stock');
    expectProblem(await rsv.confirm(declined), 422, 'reservation_declined');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 1, held: 0 });
  });

  it('an unknown key → 404 reservation_not_found, and nothing is recorded', async () => {
    const key = uniqueKey();
    expectProblem(await rsv.confirm(key), 404, 'reservation_not_found');
    expect(rsv.rows(key)).toEqual([]);
    expectProblem(await rsv.view(key), 404, 'reservation_not_found');
  });
});

describe('POST /reservations/{key}/release', () => {
  it('releasing a confirmed reservation undoes the confirm: the stock comes back, once', async () => {
    const { sku, key, id } = await held(10, 4);
    await rsv.confirm(key);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 6, held: 0 });

    const first = await rsv.release(key);
    const second = await rsv.release(key);

    expect(first.body).toEqual({ key, reservationId: id, status: 'released' });
    expect(second.body).toEqual(first.body);
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    expectProblem(await rsv.confirm(key), 422, 'reservation_released');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
    const view = await rsv.view(key);
    expect(view.body).toMatchObject({ status: 'released', confirmedAt: expect.any(String), releasedAt: expect.any(String) });
  });

  it('fences a key with no reservation, so the late hold gets 410 reservation_fenced forever and takes no stock', async () => {
    const sku = await rsv.newSku(5);
    const key = uniqueKey();

    const fenced = await rsv.release(key);
    expect(fenced.status).toBe(200);
    expect(fenced.body).toEqual({ key, reservationId: null, status: 'fenced' });

    const late = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });
    expectProblem(late, 410, 'reservation_fenced');
    expect(late.headers.get('idempotent-replayed')).toBe('false');
    const again = await rsv.hold(key, { items: [{ sku, quantity: 2 }] });
    expectProblem(again, 410, 'reservation_fenced');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await rsv.stock(sku)).toEqual({ sku, available: 5, held: 0 });
    expect(rsv.rows(key)).toEqual([{ status: 'fenced', reservation_id: null, decline_code: null }]);
    expect((await rsv.release(key)).body).toEqual({ key, reservationId: null, status: 'fenced' });
    expect((await rsv.view(key)).body).toMatchObject({
      key,
      reservationId: null,
      items: [],
      status: 'fenced',
      expiresAt: null,
      confirmedAt: null,
      releasedAt: null,
    });
  });

  it('when the hold was declined, answers declined and moves nothing', async () => {
    const sku = await rsv.newSku(1);
    const key = uniqueKey();
    expectProblem(await rsv.hold(key, { items: [{ sku, quantity: 5 }] }), 422, 'out_of_stock');

    const res = await rsv.release(key);

    expect(res.body).toEqual({ key, reservationId: null, status: 'declined' });
    expect(await rsv.stock(sku)).toEqual({ sku, available: 1, held: 0 });
  });

  it('accepts no body, an empty JSON body and {}; refuses anything else with 400 invalid_request', async () => {
    const key = uniqueKey();
    const url = `/reservations/${encodeURIComponent(key)}/release`;
    const none = await rsv.call('POST', url);
    const empty = await rsv.call('POST', url, { raw: '', headers: { 'content-type': 'application/json' } });
    const object = await rsv.call('POST', url, { body: {} });
    for (const res of [none, empty, object]) expect(res.body).toEqual({ key, reservationId: null, status: 'fenced' });

    const other = uniqueKey();
    const withField = await rsv.call('POST', `/reservations/${encodeURIComponent(other)}/release`, { body: { force: true } });
    expect(expectProblem(withField, 400, 'invalid_request').errors).toEqual([
      { field: 'force', message: 'is not an allowed field' },
    ]);
    expectProblem(
      await rsv.call('POST', `/reservations/${encodeURIComponent(other)}/confirm`, { body: [] }),
      400,
      'invalid_request',
    );
    expect(rsv.rows(other)).toEqual([]);
  });
});

describe('keys in the path', () => {
  it('finds keys with slashes whether the path encodes them or not', async () => {
    const { sku, key, id } = await held(10, 1);

    const encoded = await rsv.view(key);
    const raw = await rsv.call('GET', `/reservations/${key}`);
    expect(encoded.status).toBe(200);
    expect(encoded.body).toMatchObject({ key, reservationId: id, status: 'held', items: [{ sku, quantity: 1 }] });
    expect(raw.body).toEqual(encoded.body);

    expect((await rsv.call('POST', `/reservations/${key}/confirm`)).body).toMatchObject({ key, status: 'confirmed' });
    expect((await rsv.call('POST', `/reservations/${key}/release`)).body).toMatchObject({ key, status: 'released' });
    expect(await rsv.stock(sku)).toEqual({ sku, available: 10, held: 0 });
  });

  it('a key ending in /confirm or /release is still one key', async () => {
    const sku = await rsv.newSku(10);
    const key = `${uniqueKey()}/release`;
    expect((await rsv.hold(key, { items: [{ sku, quantity: 2 }] })).status).toBe(201);

    const confirmed = await rsv.call('POST', `/reservations/${encodeURIComponent(key)}/confirm`);
    expect(confirmed.body).toMatchObject({ key, status: 'confirmed' });
    const raw = await rsv.call('POST', `/reservations/${key}/release`);
    expect(raw.body).toMatchObject({ key, status: 'released' });
    expect(rsv.rows(key)).toHaveLength(1);
  });

  it('GET of an unknown key is 404 reservation_not_found; a bad key is 400; a bad path is 404', async () => {
    expectProblem(await rsv.view(uniqueKey()), 404, 'reservation_not_found');
    expectProblem(await rsv.call('POST', `/reservations/${'k'.repeat(513)}/release`), 400, 'idempotency_key_invalid');
    expectProblem(await rsv.call('GET', '/reservations/%E2%82%AC'), 400, 'idempotency_key_invalid');
    expectProblem(await rsv.call('GET', '/reservations/%ZZ'), 400, 'invalid_request');
  });

  it('accepts a 512-character key in the path', async () => {
    const key = `k/${'x'.repeat(510)}`;
    const res = await rsv.call('POST', `/reservations/${encodeURIComponent(key)}/release`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key, status: 'fenced' });
  });
});
