// The "Add your own operation" tutorial (docs/operations.md), run end to end: the example shipping
// service as a real process (its `service/server.ts`), the API and the worker
// as real processes loading `RETRYSAFE_OPERATIONS=<the folder>` (the worker reaching
// the service through RETRYSAFE_SERVICES), the bank in this process. A fulfilment through
// the API (the tutorial's curl), the client library (`rs.start`) and the CLI (a command it
// discovers in /openapi.json); a refusal that refunds the charge; a lost response at the
// shipping service; a step fenced at its deadline; replays. Every test reads the ledgers:
// the bank's balance and charge, the shipping service's row, and the audit of the
// definition's steps. The folder is a copy of examples/shipping outside the checkout, as a
// team's would be: its definition resolves `retrysafe-server/define` through the API's and
// the worker's loader, its service `retrysafe-server/keyed-service` through the link
// `npm i <checkout>` makes. (`npm start -- --operations` itself: npm-start.test.ts.)
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createClient, OperationFailedError } from '../../client/lib/index.js';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { runCli } from '../client/helpers.js';
import { expectFailedOperation, expectReplayed, expectSucceeded } from '../support/api.js';
import { startFullStack, type FullStack } from '../support/full-stack.js';
import { auditOperation, type OutsideAudit } from '../support/invariants.js';
import { spawnEntry, type ChildHandle } from '../support/processes.js';
import { caller, type Call } from '../support/sandbox-harness.js';
import { uniqueId } from '../support/stack.js';

let shippingProcess: ChildHandle;
let shippingUrl: string;
let shipping: Call;
let stack: FullStack;
let outside: OutsideAudit;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const teamRoot = mkdtempSync(join(tmpdir(), 'retrysafe-shipping-'));
const folder = join(teamRoot, 'shipping');

/** The team's folder: the example copied out of the checkout, retrysafe linked as `npm i <checkout>` links it. */
function copyExampleOutside(): void {
  cpSync(join(ROOT, 'examples/shipping'), folder, { recursive: true });
  mkdirSync(join(folder, 'node_modules'));
  symlinkSync(ROOT, join(folder, 'node_modules', 'retrysafe-server'), 'dir');
}

beforeAll(async () => {
  copyExampleOutside();
  const port = await freePort();
  shippingUrl = `http://127.0.0.1:${port}`;
  // Terminal 1 of the tutorial: the team's own service, with its faults on.
  shippingProcess = spawnEntry(join(folder, 'service/server.ts'), {
    SHIPPING_PORT: String(port),
    SHIPPING_DB: join(inject('tmpRoot'), uniqueId('shipping'), 'shipping.db'),
    SANDBOX_FAULTS: '1',
  });
  await shippingProcess.waitFor('shipping listening');
  shipping = caller(shippingUrl);
  stack = await startFullStack({
    name: 'example-shipping',
    reservations: false,
    worker: 'process',
    api: 'process',
    stepDeadlineMs: 5_000,
    env: { RETRYSAFE_OPERATIONS: folder },
    services: `shipping=${shippingUrl}`,
  });
  const { catalog } = await loadOperations(builtInCatalog, { RETRYSAFE_OPERATIONS: folder });
  outside = { catalog, services: { shipping: shippingUrl } };
});

afterAll(async () => {
  await stack?.close();
  await shippingProcess?.kill();
  rmSync(teamRoot, { recursive: true, force: true });
});

/** An account of its own for each test, so balances say exactly what one test did. */
async function account(balance = 100_000): Promise<string> {
  const id = uniqueId('acc');
  await stack.bank.openAccount(id, balance);
  return id;
}

const parcel = (acc: string, more: Record<string, unknown> = {}) => ({
  account: acc,
  amount: 2500,
  currency: 'EUR',
  recipient: 'Ada Lovelace',
  country: 'FR',
  postcode: '75001',
  ...more,
});

/** The tutorial's curl: POST /v1/fulfilments with an Idempotency-Key. */
function fulfil(key: string, body: unknown, prefer = 'wait=20') {
  return stack.api.request('POST', '/v1/fulfilments', { body, headers: { 'idempotency-key': key, prefer } });
}

async function shipmentOf(key: string) {
  return shipping('GET', `/shipments/${encodeURIComponent(`default/${key}/shipment`)}`);
}

const audit = (key: string, operation: Record<string, unknown>) =>
  auditOperation({ workflowId: `default/${key}`, type: 'fulfilment', amount: 2500, operation }, stack.bank, undefined, outside);

describe('an operation loaded from a copy of examples/shipping outside the checkout', () => {
  it('the curl: charges once and books one shipment; the same request again is the same fulfilment, replayed', async () => {
    const acc = await account();
    const key = uniqueId('order');
    const first = await fulfil(key, parcel(acc));
    expectSucceeded(first, 'fulfilment', key, [
      ['charge_customer', `default/${key}/charge`],
      ['create_shipment', `default/${key}/shipment`],
    ]);
    const result = first.body.result as Record<string, string>;
    expect(result.chargeId).toBe((await stack.bank.charge(`default/${key}/charge`)).body.chargeId);
    const shipment = await shipmentOf(key);
    expect(shipment.body).toMatchObject({ status: 'created', shipmentId: result.shipmentId, country: 'FR' });
    expect(result.trackingNumber).toBe(shipment.body.trackingNumber);

    expectReplayed(await fulfil(key, parcel(acc)), first);
    // The same key with another destination is another request: refused, nothing started.
    const changed = await fulfil(key, parcel(acc, { country: 'DE', postcode: '10115' }));
    expect(changed.status).toBe(422);
    expect(changed.body).toMatchObject({ code: 'idempotency_key_reused', differences: ['country', 'postcode'] });
    expect(await stack.bank.balance(acc)).toBe(97_500);
    expect(await audit(key, first.body)).toEqual([]);
  });

  it('validates the request from its schema (400 naming the field) and describes it in /openapi.json', async () => {
    const acc = await account();
    const bad = await fulfil(uniqueId('order'), parcel(acc, { country: 'france' }));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', errors: [{ field: 'country' }] });
    const doc = (await stack.api.request('GET', '/openapi.json')).body as {
      paths: Record<string, { post?: { operationId?: string } }>;
    };
    expect(doc.paths['/v1/fulfilments']?.post?.operationId).toBe('start_fulfilment');
    expect(await stack.bank.balance(acc)).toBe(100_000);
  });

  it("the client library: rs.start('fulfilment', ...) finds the type in /openapi.json; a retry with the key replays it", async () => {
    const acc = await account();
    const rs = createClient({ baseUrl: stack.api.url });
    const key = uniqueId('order');
    const done = await rs.start('fulfilment', parcel(acc), { idempotencyKey: key });
    expect(done).toMatchObject({ key, type: 'fulfilment', status: 'succeeded' });
    expect(done.meta).toMatchObject({ key, replayed: false });
    const again = await rs.start('fulfilment', parcel(acc), { idempotencyKey: key });
    expect(again.meta.replayed).toBe(true);
    expect(again.result).toEqual(done.result);
    // A refusal is an error carrying its code and the compensations that ran.
    const refused = await rs.start('fulfilment', parcel(acc, { country: 'US', postcode: '10001' })).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OperationFailedError);
    expect(refused).toMatchObject({ code: 'destination_not_served', compensations: ['refund_customer'] });
    expect(await rs.start('no_such_type', {}).catch((err: unknown) => err)).toMatchObject({ code: 'unknown_operation_type' });
    expect(await stack.bank.balance(acc)).toBe(97_500);
  });

  it('the CLI: `retrysafe fulfilment --account ... --country ...` is discovered from the API; a refusal exits 1', async () => {
    const acc = await account();
    const key = uniqueId('order');
    const env = { RETRYSAFE_API_URL: stack.api.url };
    const args = ['fulfilment', '--account', acc, '--amount', '2500', '--currency', 'eur'];
    const ok = await runCli(
      [...args, '--recipient', 'Ada Lovelace', '--country', 'FR', '--postcode', '75001', '--key', key, '--json'],
      env,
    );
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ key, type: 'fulfilment', status: 'succeeded', result: { shipmentId: /^sh_/ } });
    expect((await shipmentOf(key)).body).toMatchObject({ status: 'created', recipient: 'Ada Lovelace' });

    const refusedKey = uniqueId('order');
    const refused = await runCli(
      [...args, '--recipient', 'Ada', '--country', 'US', '--postcode', '10001', '--key', refusedKey],
      env,
    );
    expect(refused.exitCode, refused.stderr).toBe(1);
    expect(refused.stdout).toContain('destination_not_served');
    expect(refused.stdout).toContain('refund_customer');
    // The request is checked against the schema the API published before anything is sent.
    const usage = await runCli([...args, '--recipient', 'Ada', '--country', 'fr', '--postcode', '75001'], env);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("'--country' is invalid");
    expect(await stack.bank.balance(acc)).toBe(97_500);
  });

  it('a destination the service does not serve: the shipment is refused, the charge refunded, nothing shipped', async () => {
    const acc = await account();
    const key = uniqueId('order');
    const res = await fulfil(key, parcel(acc, { country: 'US', postcode: '10001' }));
    expect(res.status).toBe(200);
    expectFailedOperation(
      res.body,
      'destination_not_served',
      ['refund_customer'],
      'charge_customer:compensated create_shipment:failed',
    );
    expect((await stack.bank.charge(`default/${key}/charge`)).body.status).toBe('reversed');
    expect((await shipmentOf(key)).status).toBe(404);
    expect(await stack.bank.balance(acc)).toBe(100_000);
    // A retry gets the same outcome; nothing runs again.
    expectReplayed(await fulfil(key, parcel(acc, { country: 'US', postcode: '10001' })), res);
    expect(await audit(key, res.body)).toEqual([]);
  });

  it('a lost response at the shipping service: the worker retries with the same key and gets the stored shipment', async () => {
    const acc = await account();
    const key = uniqueId('order');
    expect((await shipping('PUT', '/_faults', { body: { dropResponseAfterCommit: 1 } })).status).toBe(200);
    let res;
    try {
      res = await fulfil(key, parcel(acc));
    } finally {
      await shipping('PUT', '/_faults', { body: { dropResponseAfterCommit: 0 } });
    }
    expect(res.body).toMatchObject({ status: 'succeeded' });
    // The service committed the shipment and lost its answer; the retry replayed it.
    const dropped = shippingProcess.output
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.key === `default/${key}/shipment` && entry.msg === 'fault: committed, dropping the response');
    expect(dropped).toHaveLength(1);
    expect((await shipmentOf(key)).body).toMatchObject({
      status: 'created',
      shipmentId: (res.body.result as Record<string, string>).shipmentId,
    });
    expect(await stack.bank.balance(acc)).toBe(97_500);
    expect(await audit(key, res.body)).toEqual([]);
  });

  it('the service down past the deadline: the shipment is fenced (a tombstone), the charge refunded, fulfilment_unavailable', async () => {
    const acc = await account();
    const key = uniqueId('order');
    await shipping('PUT', '/_faults', { body: { down: true } });
    try {
      const started = await fulfil(key, parcel(acc), 'respond-async');
      expect(started.status).toBe(202);
      // Longer than the 5 s deadline of create_shipment.
      await sleep(6_500);
    } finally {
      await shipping('PUT', '/_faults', { body: { down: false } });
    }
    const final = await stack.api.waitTerminal(key);
    expectFailedOperation(
      final,
      'fulfilment_unavailable',
      ['cancel_shipment', 'refund_customer'],
      'charge_customer:compensated create_shipment:fenced',
    );
    expect((await shipmentOf(key)).body).toMatchObject({ status: 'fenced', shipmentId: null });
    expect(await stack.bank.balance(acc)).toBe(100_000);
    expect(await audit(key, final)).toEqual([]);
  });
});
