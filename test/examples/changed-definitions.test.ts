// A team changes its definitions while operations of them are in flight, and restarts:
// each operation in flight finishes on the definition it started with, a new one runs the
// new definition. The real launcher (`npm start -- --operations <folder>`) runs a folder
// outside the checkout that imports retrysafe by its package name; the shipping example
// service is the team's own service, down while the operations are started (each is
// charged and waits on its shipment), up after the restart.
//
// Five changes at once, one operation type each:
//   early    a step inserted before one that had completed (a deposit before the charge)
//   late     a step inserted before the one in flight (a deposit between charge and shipment)
//   dropped  the step in flight removed
//   rebody   the body of the step in flight changed (the recipient becomes a constant)
//   renamed  the charge's compensation renamed (these operations end refused, so it runs)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { freeStackPorts, useLaunchers } from '../launcher/harness.js';
import { spawnEntry, type ChildHandle } from '../support/processes.js';

const BANNER = /retrysafe is ready in (\d+(?:\.\d+)?) s[\s\S]*Ctrl-C stops everything/;
const START_TIMEOUT = 240_000;
const TYPES = ['early', 'late', 'dropped', 'rebody', 'renamed'] as const;
type Kind = (typeof TYPES)[number];

/** The folder's operations.ts, before (1) and after (2) the change. */
function definitions(version: 1 | 2): string {
  const changed = version === 2;
  return `// A team's own operations, outside the checkout: they import retrysafe by its package name.
import { Account, Amount, bankCharge, Currency, defineOperation, keyedHttpStep, RequestBody, Type } from 'retrysafe-server/define';

const Parcel = RequestBody('An order to charge and ship.', {
  account: Account('Account to charge'),
  amount: Amount,
  currency: Currency,
  recipient: Type.String({ minLength: 1, maxLength: 100 }),
  country: Type.String({ pattern: '^[A-Z]{2}$' }),
  postcode: Type.String({ pattern: '^[A-Za-z0-9 -]{2,12}$' }),
});

const charge = (name: string, undo: string) =>
  bankCharge({ name, keySuffix: 'charge', account: 'account', undo, resultField: 'chargeId' });
const deposit = (name: string, undo: string) =>
  bankCharge({ name, keySuffix: 'deposit', account: 'account', undo, resultField: 'depositId' });
const address = { recipient: 'recipient', country: 'country', postcode: 'postcode' } as const;
const ship = (name: string, body: Record<string, string | { value: string }> = address) =>
  keyedHttpStep({
    name,
    keySuffix: 'shipment',
    service: 'shipping',
    collection: '/shipments',
    body,
    businessErrors: { destination_not_served: 'destination_not_served' },
    undo: { name: name + '_cancel', action: 'cancel' },
    result: { shipmentId: 'id' },
    present: ['created'],
  });
const operation = (type: string, steps: ReturnType<typeof ship>[]) =>
  defineOperation({ type, plural: type + '-orders', description: type, request: Parcel, steps, unavailableCode: type + '_unavailable' });

export const operations = [
  operation('early', [${changed ? "deposit('early_deposit', 'early_deposit_return'), " : ''}charge('early_charge', 'early_refund'), ship('early_ship')]),
  operation('late', [charge('late_charge', 'late_refund'), ${changed ? "deposit('late_deposit', 'late_deposit_return'), " : ''}ship('late_ship')]),
  operation('dropped', [charge('dropped_charge', 'dropped_refund')${changed ? '' : ", ship('dropped_ship')"}]),
  operation('rebody', [charge('rebody_charge', 'rebody_refund'), ship('rebody_ship'${changed ? ", { ...address, recipient: { value: 'Changed Recipient' } }" : ''})]),
  operation('renamed', [charge('renamed_charge', ${changed ? "'renamed_refund_v2'" : "'renamed_refund'"}), ship('renamed_ship')]),
];
`;
}

/** The steps each type's operations run on each definition, and the compensation a refused one runs. */
const STEPS: Record<Kind, Record<1 | 2, string[]>> = {
  early: { 1: ['early_charge', 'early_ship'], 2: ['early_deposit', 'early_charge', 'early_ship'] },
  late: { 1: ['late_charge', 'late_ship'], 2: ['late_charge', 'late_deposit', 'late_ship'] },
  dropped: { 1: ['dropped_charge', 'dropped_ship'], 2: ['dropped_charge'] },
  rebody: { 1: ['rebody_charge', 'rebody_ship'], 2: ['rebody_charge', 'rebody_ship'] },
  renamed: { 1: ['renamed_charge', 'renamed_ship'], 2: ['renamed_charge', 'renamed_ship'] },
};

const launchers = useLaunchers('retrysafe-changed-');
const outside = mkdtempSync(join(tmpdir(), 'retrysafe-team-'));
let service: ChildHandle | undefined;

afterEach(async () => {
  await service?.kill();
  service = undefined;
});
afterAll(() => rmSync(outside, { recursive: true, force: true }));

type Json = Record<string, unknown>;

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Json };
}

describe('a definition changed while its operations are in flight', () => {
  it('each operation in flight finishes on its start definition; new operations run the new one', async () => {
    const ports = await freeStackPorts();
    const shippingPort = await freePort();
    const dataDir = launchers.dir(randomUUID());
    const extra = {
      RETRYSAFE_SERVICES: `shipping=http://127.0.0.1:${shippingPort}`,
      // Long enough that no step in flight is fenced while the stack restarts.
      RETRYSAFE_STEP_DEADLINE: '10m',
    };
    const api = `http://127.0.0.1:${ports.api}`;
    const bank = `http://127.0.0.1:${ports.bank}`;
    const shipping = `http://127.0.0.1:${shippingPort}`;
    const run = `r${randomUUID().slice(0, 6)}`;
    const parcel = (kind: Kind) => ({
      account: 'acc_alice',
      amount: 1200,
      currency: 'EUR',
      recipient: 'Ada Lovelace',
      // The renamed type's operations are refused by the shipping service, so their compensation runs.
      country: kind === 'renamed' ? 'US' : 'FR',
      postcode: '75001',
    });
    const start = (kind: Kind, key: string) =>
      json(`${api}/v1/${kind}-orders`, {
        method: 'POST',
        headers: { 'idempotency-key': key, 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify(parcel(kind)),
      });
    const get = (key: string) => json(`${api}/v1/operations/${encodeURIComponent(key)}`);
    const untilFinished = async (key: string) => {
      for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
        const { body } = await get(key);
        if (body.status !== 'processing') return body;
      }
      throw new Error(`${key} did not finish`);
    };
    const downstream = (service: string, collection: string, key: string, suffix: string) =>
      json(`${service}${collection}/${encodeURIComponent(`default/${key}/${suffix}`)}`);

    writeFileSync(join(outside, 'operations.ts'), definitions(1));
    let launcher = launchers.launch(['--operations', outside], dataDir, ports, extra);
    await launcher.waitFor(BANNER, START_TIMEOUT);

    // One operation of each type: charged, then waiting on its shipment (the service is down).
    const inFlight = Object.fromEntries(TYPES.map((kind) => [kind, `${run}-${kind}-1`])) as Record<Kind, string>;
    const started: Record<string, string> = {};
    for (const kind of TYPES) {
      const { status, body } = await start(kind, inFlight[kind]);
      expect(status, JSON.stringify(body)).toBe(202);
      started[kind] = (body.definition as { version: string }).version;
    }
    for (const kind of TYPES) {
      for (const deadline = Date.now() + 60_000; ; await sleep(300)) {
        const { body } = await get(inFlight[kind]);
        if (body.step === `${kind}_ship`) break;
        if (Date.now() > deadline) throw new Error(`${inFlight[kind]} never reached its shipment: ${JSON.stringify(body)}`);
      }
    }

    // The team changes its definitions and restarts.
    launcher.child.kill('SIGTERM');
    expect((await launcher.exit(30_000)).code, launcher.tail()).toBe(0);
    launchers.stopped(launcher);
    writeFileSync(join(outside, 'operations.ts'), definitions(2));
    launcher = launchers.launch(['--operations', outside], dataDir, ports, extra);
    await launcher.waitFor(BANNER, START_TIMEOUT);
    service = spawnEntry('examples/shipping/service/server.ts', {
      SHIPPING_PORT: String(shippingPort),
      SHIPPING_DB: join(dataDir, 'shipping.db'),
    });
    await service.waitFor('shipping listening');

    for (const kind of TYPES) {
      const key = inFlight[kind];
      const done = await untilFinished(key);
      const names = (done.steps as Array<{ name: string }>).map((s) => s.name);
      // Exactly its start definition's steps, its version, and nothing claimed that did not run.
      expect(names, key).toEqual(STEPS[kind][1]);
      expect(done.definition, key).toEqual({ version: started[kind] });
      const charge = await downstream(bank, '/charges', key, 'charge');
      const shipment = await downstream(shipping, '/shipments', key, 'shipment');
      // No step the start definition lacked ran: no deposit under its key.
      expect((await downstream(bank, '/charges', key, 'deposit')).status, key).toBe(404);
      if (kind === 'renamed') {
        expect(done, key).toMatchObject({
          status: 'failed',
          error: { code: 'destination_not_served', compensations: ['renamed_refund'] },
        });
        expect(charge.body.status, key).toBe('reversed');
        expect(shipment.body.status, key).not.toBe('created');
        continue;
      }
      expect(done.status, JSON.stringify(done)).toBe('succeeded');
      expect(
        (done.steps as Array<{ status: string }>).every((s) => s.status === 'completed'),
        key,
      ).toBe(true);
      expect(charge.body.status, key).toBe('captured');
      expect(shipment.body, key).toMatchObject({ status: 'created', recipient: 'Ada Lovelace' });
    }

    // New operations run the new definitions.
    for (const kind of TYPES) {
      const key = `${run}-${kind}-2`;
      // Answered at once (all its steps in one workflow task) or while it runs: either way it started.
      expect([200, 202]).toContain((await start(kind, key)).status);
      const done = await untilFinished(key);
      expect(
        (done.steps as Array<{ name: string }>).map((s) => s.name),
        key,
      ).toEqual(STEPS[kind][2]);
      expect((done.definition as { version: string }).version, key).not.toBe(started[kind]);
      const deposit = await downstream(bank, '/charges', key, 'deposit');
      expect(deposit.status, key).toBe(kind === 'early' || kind === 'late' ? 200 : 404);
      const shipment = await downstream(shipping, '/shipments', key, 'shipment');
      if (kind === 'dropped') expect(shipment.status, key).toBe(404);
      if (kind === 'rebody') expect(shipment.body, key).toMatchObject({ status: 'created', recipient: 'Changed Recipient' });
      if (kind === 'renamed') expect(done, key).toMatchObject({ error: { compensations: ['renamed_refund_v2'] } });
    }

    // The list finds the operations of each definition by its version (visibility catches up shortly).
    let listed: unknown[] = [];
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(500)) {
      const { body } = await json(`${api}/v1/operations?type=early&version=${started.early}`);
      listed = (body.operations as Json[]).map((o) => o.key);
      if (listed.length > 0) break;
    }
    expect(listed).toEqual([inFlight.early]);

    launcher.child.kill('SIGTERM');
    expect((await launcher.exit(30_000)).code, launcher.tail()).toBe(0);
    launchers.stopped(launcher);
  });
});
