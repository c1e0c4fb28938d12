// The example shipping service on its own: real HTTP on loopback, a real SQLite file. What
// every service a declared step calls must do: one shipment per Idempotency-Key (stored
// answers replayed, refusals included), a keyed cancel that leaves a tombstone when nothing
// was booked so a late create is refused, problems with stable codes for every bad input,
// and the fault that loses a committed answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/env.js';
import { buildApp } from '../../examples/shipping/service/app.js';
import { loadShippingConfig } from '../../examples/shipping/service/config.js';
import {
  expectProblem,
  LOST_ANSWER,
  networkError,
  sandboxKey,
  startSandboxApp,
  type Call,
  type SandboxUnderTest,
} from '../support/sandbox-harness.js';

const PARCEL = { recipient: 'Ada Lovelace', country: 'FR', postcode: '75001' };

const started: SandboxUnderTest[] = [];

async function start(faults: boolean): Promise<SandboxUnderTest> {
  const service = await startSandboxApp('shipping', (db) => buildApp({ db, faults, keyTtlMs: 7 * 86_400_000 }), {});
  started.push(service);
  return service;
}

let call: Call;
beforeAll(async () => {
  ({ call } = await start(true));
});
afterAll(async () => {
  for (const service of started) await service.close();
});

const path = (key: string, suffix = '') => `/shipments/${encodeURIComponent(key)}${suffix}`;

describe('POST /shipments', () => {
  it('books one shipment per key; the same request again gets the stored answer, marked replayed', async () => {
    const key = sandboxKey('shipment');
    const first = await call('POST', '/shipments', { key, body: PARCEL });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toMatchObject({ key, status: 'created', ...PARCEL, id: expect.stringMatching(/^sh_/) });
    expect(first.body.trackingNumber).toMatch(/^TRK[0-9A-F]{10}$/);

    const again = await call('POST', '/shipments', { key, body: PARCEL });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await call('GET', path(key))).body).toMatchObject({
      key,
      shipmentId: first.body.id,
      trackingNumber: first.body.trackingNumber,
      status: 'created',
      cancelledAt: null,
    });
  });

  it('refuses the same key with another parcel (422 idempotency_key_reused), and books nothing new', async () => {
    const key = sandboxKey('shipment');
    const first = await call('POST', '/shipments', { key, body: PARCEL });
    expectProblem(
      await call('POST', '/shipments', { key, body: { ...PARCEL, postcode: '75002' } }),
      422,
      'idempotency_key_reused',
    );
    expect((await call('GET', path(key))).body).toMatchObject({ shipmentId: first.body.id, postcode: '75001' });
  });

  it('refuses a destination it does not serve (422 destination_not_served), stores the refusal and books nothing', async () => {
    const key = sandboxKey('shipment');
    const body = { ...PARCEL, country: 'US', postcode: '10001' };
    const refused = expectProblem(await call('POST', '/shipments', { key, body }), 422, 'destination_not_served');
    expect(refused.detail).toBe('we do not ship to US');
    const again = await call('POST', '/shipments', { key, body });
    expectProblem(again, 422, 'destination_not_served');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expectProblem(await call('GET', path(key)), 404, 'shipment_not_found');
  });

  it('answers every malformed key or body with a 400 problem naming it, and stores nothing', async () => {
    expectProblem(await call('POST', '/shipments', { body: PARCEL }), 400, 'idempotency_key_missing');
    expectProblem(await call('POST', '/shipments', { key: '', body: PARCEL }), 400, 'idempotency_key_invalid');
    expectProblem(await call('POST', '/shipments', { key: 'x'.repeat(513), body: PARCEL }), 400, 'idempotency_key_invalid');
    expectProblem(await call('POST', '/shipments', { key: 'tab\there', body: PARCEL }), 400, 'idempotency_key_invalid');
    const key = sandboxKey('shipment');
    const bad: Array<[unknown, string]> = [
      [{ ...PARCEL, country: 'fr' }, 'country'],
      [{ ...PARCEL, country: 'FRA' }, 'country'],
      [{ ...PARCEL, postcode: '7' }, 'postcode'],
      [{ ...PARCEL, postcode: '75001<script>' }, 'postcode'],
      [{ ...PARCEL, recipient: '' }, 'recipient'],
      [{ ...PARCEL, recipient: 'x'.repeat(101) }, 'recipient'],
      [{ country: 'FR', postcode: '75001' }, 'recipient'],
      [{ ...PARCEL, weight: 2 }, 'weight'],
      [{ ...PARCEL, postcode: 75001 }, 'postcode'],
    ];
    for (const [body, field] of bad) {
      const problem = expectProblem(await call('POST', '/shipments', { key, body }), 400, 'invalid_request');
      expect(JSON.stringify(problem.errors), JSON.stringify(body)).toContain(field);
    }
    expectProblem(await call('POST', '/shipments', { key, raw: '{"recipient":' }), 400, 'invalid_request');
    expectProblem(await call('POST', '/shipments', { key, raw: '' }), 400, 'invalid_request');
    expectProblem(
      await call('POST', '/shipments', { key, raw: '<parcel/>', headers: { 'content-type': 'application/xml' } }),
      415,
      'unsupported_media_type',
    );
    const huge = JSON.stringify({ ...PARCEL, recipient: 'x'.repeat(70_000) });
    expectProblem(await call('POST', '/shipments', { key, raw: huge }), 413, 'payload_too_large');
    // None of those consumed the key: it still books a shipment.
    expect((await call('POST', '/shipments', { key, body: PARCEL })).status).toBe(201);
  });
});

describe('POST /shipments/{key}/cancel', () => {
  it('cancels a booked shipment once; a repeat changes nothing and answers the same', async () => {
    const key = sandboxKey('shipment');
    const booked = await call('POST', '/shipments', { key, body: PARCEL });
    const cancelled = await call('POST', path(key, '/cancel'));
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ key, shipmentId: booked.body.id, status: 'cancelled' });
    const cancelledAt = (await call('GET', path(key))).body.cancelledAt;
    expect(cancelledAt).toEqual(expect.any(String));
    expect((await call('POST', path(key, '/cancel'))).body).toEqual(cancelled.body);
    expect((await call('GET', path(key))).body).toMatchObject({ status: 'cancelled', cancelledAt });
    // The create is still answered as it was: the key booked that shipment, now cancelled.
    expect((await call('POST', '/shipments', { key, body: PARCEL })).body.id).toBe(booked.body.id);
  });

  it('leaves a tombstone when nothing was booked (status fenced), so the late create is refused with 410', async () => {
    const key = sandboxKey('shipment');
    const fenced = await call('POST', path(key, '/cancel'));
    expect(fenced.status).toBe(200);
    expect(fenced.body).toEqual({ key, shipmentId: null, status: 'fenced' });
    expectProblem(await call('POST', '/shipments', { key, body: PARCEL }), 410, 'shipment_fenced');
    expect((await call('GET', path(key))).body).toMatchObject({ key, shipmentId: null, status: 'fenced', recipient: null });
    expect((await call('POST', path(key, '/cancel'))).body).toEqual(fenced.body);
  });

  it('reads keys holding `/` plain or percent-encoded, and refuses a malformed one', async () => {
    const key = sandboxKey('shipment');
    await call('POST', '/shipments', { key, body: PARCEL });
    expect((await call('GET', `/shipments/${key}`)).body).toMatchObject({ key, status: 'created' });
    expect((await call('POST', `/shipments/${key}/cancel`)).body).toMatchObject({ key, status: 'cancelled' });
    expectProblem(await call('GET', '/shipments/%E0%A4%A'), 400, 'invalid_request');
    expectProblem(await call('POST', `/shipments/${'x'.repeat(513)}/cancel`), 400, 'idempotency_key_invalid');
    expectProblem(await call('POST', '/shipments/a/b/ship'), 404, 'not_found');
  });
});

describe('fault injection (SANDBOX_FAULTS=1)', () => {
  it('a dropped answer: the client sees a reset, the shipment is booked, the retry with the key replays it', async () => {
    const key = sandboxKey('shipment');
    expect((await call('PUT', '/_faults', { body: { dropResponseAfterCommit: 1 } })).status).toBe(200);
    try {
      expect(await networkError(call('POST', '/shipments', { key, body: PARCEL }))).toMatch(LOST_ANSWER);
      const retry = await call('POST', '/shipments', { key, body: PARCEL });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect((await call('GET', path(key))).body).toMatchObject({ shipmentId: retry.body.id, status: 'created' });
      // A cancel's answer is lost the same way; the cancel stands, and asking again says so.
      expect(await networkError(call('POST', path(key, '/cancel')))).toMatch(LOST_ANSWER);
      expect((await call('POST', path(key, '/cancel'))).body).toMatchObject({ status: 'cancelled' });
    } finally {
      await call('PUT', '/_faults', { body: { dropResponseAfterCommit: 0 } });
    }
  });

  it('down: the connection is reset before anything is read, and nothing is stored', async () => {
    const key = sandboxKey('shipment');
    await call('PUT', '/_faults', { body: { down: true } });
    try {
      expect(await networkError(call('POST', '/shipments', { key, body: PARCEL }))).toMatch(LOST_ANSWER);
      expect(await networkError(call('POST', path(key, '/cancel')))).toMatch(LOST_ANSWER);
      // Reads are never faulted: an auditor can always look.
      expectProblem(await call('GET', path(key)), 404, 'shipment_not_found');
    } finally {
      await call('PUT', '/_faults', { body: { down: false } });
    }
    expect((await call('POST', '/shipments', { key, body: PARCEL })).headers.get('idempotent-replayed')).toBe('false');
  });

  it('refuses bad fault settings, and has no /_faults at all unless SANDBOX_FAULTS is on', async () => {
    expectProblem(await call('PUT', '/_faults', { body: { dropResponseAfterCommit: 2 } }), 400, 'invalid_request');
    expectProblem(await call('PUT', '/_faults', { body: { lose: 1 } }), 400, 'invalid_request');
    const plain = await start(false);
    expectProblem(await plain.call('PUT', '/_faults', { body: { down: true } }), 404, 'not_found');
    expect((await plain.call('POST', '/shipments', { key: sandboxKey('shipment'), body: PARCEL })).status).toBe(201);
  });
});

describe('configuration', () => {
  it('defaults to 127.0.0.1:4003 and .data/shipping.db, without faults', () => {
    expect(loadShippingConfig({})).toMatchObject({ host: '127.0.0.1', port: 4003, dbPath: '.data/shipping.db', faults: false });
    expect(loadShippingConfig({ SHIPPING_PORT: '4903', SANDBOX_FAULTS: '1' })).toMatchObject({ port: 4903, faults: true });
  });

  it('names each bad variable', () => {
    let problems: string[] = [];
    try {
      loadShippingConfig({ SHIPPING_PORT: 'http', SANDBOX_FAULTS: 'maybe', KEY_TTL: 'forever' });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(/^SHIPPING_PORT="http": must be a whole number/),
      expect.stringMatching(/^KEY_TTL="forever": .*not a duration/),
      expect.stringMatching(/^SANDBOX_FAULTS="maybe": must be 1\/true\/yes/),
    ]);
  });
});
