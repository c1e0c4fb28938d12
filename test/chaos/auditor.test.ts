// The chaos auditor must be able to fail: fed ledgers and operation resources that break
// each invariant (served over real HTTP by a small stand-in), it names the invariant and
// the key; fed a consistent world, it finds nothing.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, type AuditInput } from '../../chaos/auditor.js';
import { outcomeSignature, type OpRecord } from '../../chaos/client.js';
import type { PlannedOp } from '../../chaos/plan.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../chaos/webhook-receiver.js';
import { Webhook } from 'standardwebhooks';

type Doc = Record<string, unknown>;

/** What the stand-in serves: per path, per server (api-0, api-1, bank, reservations). */
interface World {
  api: [Map<string, Doc>, Map<string, Doc>];
  charges: Map<string, Doc>;
  accounts: Map<string, Doc>;
  reservations: Map<string, Doc>;
  inventory: Map<string, Doc>;
}

let world: World;
const servers: Server[] = [];
const urls: string[] = [];

function serve(lookup: (path: string) => Doc | undefined): Promise<string> {
  const server = createServer((req, res) => {
    const doc = lookup(decodeURIComponent(req.url ?? ''));
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ?? { code: 'not_found' }));
  });
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)),
  );
}

const strip = (path: string, prefix: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : undefined);

beforeAll(async () => {
  const lookupIn = (map: () => Map<string, Doc>, prefix: string) => (path: string) => {
    const id = strip(path, prefix);
    return id === undefined ? undefined : map().get(id);
  };
  urls.push(
    await serve(lookupIn(() => world.api[0], '/v1/operations/')),
    await serve(lookupIn(() => world.api[1], '/v1/operations/')),
    await serve((p) => lookupIn(() => world.charges, '/charges/')(p) ?? lookupIn(() => world.accounts, '/accounts/')(p)),
    await serve(
      (p) => lookupIn(() => world.reservations, '/reservations/')(p) ?? lookupIn(() => world.inventory, '/inventory/')(p),
    ),
  );
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

function plannedOp(key: string, type: 'payment' | 'checkout', amount: number): PlannedOp {
  return {
    index: 0,
    key,
    type,
    profile: 'normal',
    body: {
      account: 'acc_a',
      amount,
      currency: 'EUR',
      ...(type === 'checkout' ? { items: [{ sku: 'sku_a', quantity: 2 }] } : {}),
    },
    atMs: 0,
    concurrency: 1,
    keyForm: 'bare',
    firstApi: 0,
    getAfter202: 0,
    lateReplaysMs: [],
    clientSeed: 1,
  };
}

/** A consistent world: one succeeded payment of 500 and one succeeded checkout of 700 (2 × sku_a). */
function consistentWorld(): { ops: PlannedOp[]; records: Map<string, OpRecord> } {
  const pay = plannedOp('pay-1', 'payment', 500);
  const cart = plannedOp('cart-1', 'checkout', 700);
  const payOp = { key: 'pay-1', status: 'succeeded', result: { chargeId: 'ch_1' } };
  const cartOp = { key: 'cart-1', status: 'succeeded', result: { chargeId: 'ch_2', reservationId: 'rs_1' } };
  world = {
    api: [
      new Map([
        ['pay-1', payOp],
        ['cart-1', cartOp],
      ]),
      new Map([
        ['pay-1', { ...payOp }],
        ['cart-1', { ...cartOp }],
      ]),
    ],
    charges: new Map([
      ['default/pay-1/charge', { status: 'captured', chargeId: 'ch_1', account: 'acc_a', amount: 500 }],
      ['default/cart-1/charge', { status: 'captured', chargeId: 'ch_2', account: 'acc_a', amount: 700 }],
    ]),
    accounts: new Map([['acc_a', { id: 'acc_a', balance: 10_000 - 1_200 }]]),
    reservations: new Map([
      ['default/cart-1/reserve', { status: 'confirmed', reservationId: 'rs_1', items: [{ sku: 'sku_a', quantity: 2 }] }],
    ]),
    inventory: new Map([['sku_a', { sku: 'sku_a', available: 98, held: 0 }]]),
  };
  const records = new Map<string, OpRecord>(
    [
      [pay, payOp],
      [cart, cartOp],
    ].map(([op, resource]) => [
      (op as PlannedOp).key,
      {
        op: op as PlannedOp,
        accepted: true,
        outcomes: [{ via: 'api-0 POST', signature: outcomeSignature(resource as Doc) }],
        requests: 1,
        timedOut: false,
      },
    ]),
  );
  return { ops: [pay, cart], records };
}

function input(ops: PlannedOp[], records: Map<string, OpRecord>): AuditInput {
  return {
    apiUrls: [urls[0]!, urls[1]!],
    bankUrl: urls[2]!,
    reservationsUrl: urls[3]!,
    ops,
    records,
    initialBalances: { acc_a: 10_000 },
    initialStock: { sku_a: 100 },
  };
}

describe('the chaos auditor', () => {
  it('finds nothing wrong in a consistent world', async () => {
    const { ops, records } = consistentWorld();
    const result = await audit(input(ops, records));
    expect(result.violations).toEqual([]);
    expect(result.outcomes).toMatchObject({ succeeded: 2, failed: 0, open: 0 });
    expect(result.conservation.accounts).toEqual([
      { id: 'acc_a', initial: 10_000, final: 8_800, netCharged: 1_200, succeeded: 1_200 },
    ]);
  });

  it('when a retry charged a second time under another key, reports the money no operation explains', async () => {
    const { ops, records } = consistentWorld();
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 - 500 });
    const { violations } = await audit(input(ops, records));
    expect(violations).toEqual([
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('(500 charged that no succeeded operation explains)'),
      }),
    ]);
  });

  it('when a succeeded payment has no charge under its key, reports invariant 1 with the key', async () => {
    const { ops, records } = consistentWorld();
    world.charges.delete('default/pay-1/charge');
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 700 });
    const { violations } = await audit(input(ops, records));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I1 money moves at most once', key: 'pay-1' }));
  });

  it('when a failed checkout left money charged and its hold held, reports invariants 1 and 2', async () => {
    const { ops, records } = consistentWorld();
    const failed = {
      key: 'cart-1',
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge', 'release_reservation'] },
    };
    world.api = [new Map([...world.api[0], ['cart-1', failed]]), new Map([...world.api[1], ['cart-1', { ...failed }]])];
    records.get('cart-1')!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(failed) }];
    world.reservations.set('default/cart-1/reserve', {
      status: 'held',
      reservationId: 'rs_1',
      items: [{ sku: 'sku_a', quantity: 2 }],
    });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 98, held: 2 });
    const { violations } = await audit(input(ops, records));
    const rules = violations.filter((v) => v.key === 'cart-1').map((v) => v.rule);
    expect(rules).toContain('I1 money moves at most once');
    expect(rules).toContain('I2 reservations');
    expect(violations).toContainEqual(
      expect.objectContaining({ rule: 'I2 reservations', message: expect.stringContaining('still held at the end') }),
    );
  });

  it('when the two API instances (or a client) saw different outcomes, reports invariant 4', async () => {
    const { ops, records } = consistentWorld();
    world.api[1].set('pay-1', { key: 'pay-1', status: 'failed', error: { code: 'insufficient_funds', compensations: [] } });
    records.get('cart-1')!.outcomes.push({ via: 'api-1 late retry', signature: outcomeSignature({ status: 'failed' }) });
    const { violations } = await audit(input(ops, records));
    expect(
      violations
        .filter((v) => v.rule === 'I4 same outcome through any instance')
        .map((v) => v.key)
        .sort(),
    ).toEqual(['cart-1', 'pay-1']);
  });

  it('when an accepted operation cannot be found, or is still open without NeedsAttention, reports invariants 5 and 3', async () => {
    const { ops, records } = consistentWorld();
    world.api[0].delete('pay-1');
    world.api[1].delete('pay-1');
    const open = { key: 'cart-1', status: 'processing', step: 'charge_payment' };
    world.api[0].set('cart-1', open);
    world.api[1].set('cart-1', { ...open });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I5 nothing lost', key: 'pay-1' }));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I3 every operation ends', key: 'cart-1' }));
    expect(outcomes.open).toBe(1);
  });

  it('accepts an operation still compensating when it carries NeedsAttention', async () => {
    const { ops, records } = consistentWorld();
    const open = { key: 'cart-1', status: 'processing', step: 'charge_payment', needsAttention: true };
    world.api[0].set('cart-1', open);
    world.api[1].set('cart-1', { ...open });
    world.reservations.set('default/cart-1/reserve', {
      status: 'held',
      reservationId: 'rs_1',
      items: [{ sku: 'sku_a', quantity: 2 }],
    });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 98, held: 2 });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toEqual([]);
    expect(outcomes).toMatchObject({ openNeedsAttention: 1, needsAttention: 1, open: 0 });
  });

  it('accepts a cancelled checkout that moved no money and kept no hold', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = {
      key: 'cart-1',
      status: 'failed',
      cancelRequested: true,
      error: { code: 'cancelled', compensations: ['reverse_charge', 'release_reservation'] },
    };
    world.api = [new Map([...world.api[0], ['cart-1', cancelled]]), new Map([...world.api[1], ['cart-1', { ...cancelled }]])];
    records.get('cart-1')!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(cancelled) }];
    records.get('cart-1')!.cancel = { status: 202, step: 'charge_payment' };
    world.charges.set('default/cart-1/charge', { status: 'reversed', chargeId: 'ch_2', account: 'acc_a', amount: 700 });
    world.reservations.set('default/cart-1/reserve', { status: 'released', items: [{ sku: 'sku_a', quantity: 2 }] });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toEqual([]);
    expect(outcomes.byCode).toEqual({ cancelled: 1 });
  });

  it('when a cancelled operation kept its charge, or ended cancelled after a 409, or hid an accepted cancel, says so', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = { key: 'cart-1', status: 'failed', cancelRequested: true, error: { code: 'cancelled', compensations: [] } };
    world.api = [new Map([...world.api[0], ['cart-1', cancelled]]), new Map([...world.api[1], ['cart-1', { ...cancelled }]])];
    records.get('cart-1')!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(cancelled) }];
    records.get('cart-1')!.cancel = { status: 409, code: 'operation_already_completed' };
    records.get('pay-1')!.cancel = { status: 202, step: 'charge_payment' };
    world.reservations.delete('default/cart-1/reserve');
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations } = await audit(input(ops, records));
    const cart = violations.filter((v) => v.key === 'cart-1').map((v) => v.rule);
    expect(cart).toContain('I1 money moves at most once');
    expect(cart).toContain('API: a finished operation is not changed by a cancel');
    expect(cart).toContain('API: only a cancel cancels');
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'API: a cancel shows in the resource', key: 'pay-1' }));
  });

  it('accepts a 409 to a cancel whose earlier attempt got no answer, when the operation ended cancelled through it', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = { key: 'cart-1', status: 'failed', cancelRequested: true, error: { code: 'cancelled', compensations: [] } };
    world.api = [new Map([...world.api[0], ['cart-1', cancelled]]), new Map([...world.api[1], ['cart-1', { ...cancelled }]])];
    records.get('cart-1')!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(cancelled) }];
    records.get('cart-1')!.cancel = { status: 409, code: 'operation_already_completed', unanswered: 1 };
    world.charges.set('default/cart-1/charge', { status: 'reversed', chargeId: 'ch_2', account: 'acc_a', amount: 700 });
    world.reservations.set('default/cart-1/reserve', { status: 'released', items: [{ sku: 'sku_a', quantity: 2 }] });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    expect((await audit(input(ops, records))).violations).toEqual([]);

    // ...but not when the resource does not show that a cancel came through.
    const hidden = { ...cancelled, cancelRequested: undefined };
    world.api = [new Map([...world.api[0], ['cart-1', hidden]]), new Map([...world.api[1], ['cart-1', { ...hidden }]])];
    records.get('cart-1')!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(hidden) }];
    const { violations } = await audit(input(ops, records));
    expect(violations).toEqual([expect.objectContaining({ rule: 'API: a cancel shows in the resource', key: 'cart-1' })]);
  });

  describe('with a completion webhook', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver({ secret });
    });
    afterAll(async () => {
      await receiver.close();
    });

    async function deliver(id: string, body: unknown, signWith = secret, answer = 204) {
      receiver.answerNext(answer);
      const text = JSON.stringify(body);
      const at = new Date();
      const res = await fetch(receiver.url, {
        method: 'POST',
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(signWith).sign(id, at, text),
        },
        body: text,
      });
      expect(res.status).toBe(answer);
    }

    it('accepts every finished operation delivered once, with redeliveries of the same body, and counts them', async () => {
      const { ops, records } = consistentWorld();
      const pay = { type: 'operation.succeeded', data: world.api[0].get('pay-1') };
      const cart = { type: 'operation.succeeded', data: world.api[0].get('cart-1') };
      await deliver('default/pay-1/completed', pay, secret, 500);
      await deliver('default/pay-1/completed', pay);
      await deliver('default/cart-1/completed', cart);
      const { violations, webhooks } = await audit({ ...input(ops, records), webhooks: receiver });
      expect(violations).toEqual([]);
      expect(webhooks).toEqual({ delivered: 2, posts: 3, redeliveries: 1, refused: 1 });
    });

    it('reports an undelivered event, a bad signature, a changed body and an event that is not the outcome', async () => {
      receiver.deliveries.length = 0;
      const { ops, records } = consistentWorld();
      const pay = { type: 'operation.succeeded', data: world.api[0].get('pay-1') };
      await deliver('default/pay-1/completed', pay, `whsec_${Buffer.alloc(32, 8).toString('base64')}`, 500);
      await deliver('default/pay-1/completed', { ...pay, extra: 1 });
      const { violations } = await audit({ ...input(ops, records), webhooks: receiver });
      expect(violations.filter((v) => v.key === 'pay-1').map((v) => v.rule)).toEqual(
        expect.arrayContaining(['webhooks: every delivery is signed', 'webhooks: a redelivery carries the same body']),
      );
      expect(violations).toContainEqual(expect.objectContaining({ rule: 'webhooks: delivered at least once', key: 'cart-1' }));

      receiver.deliveries.length = 0;
      await deliver('default/pay-1/completed', { type: 'operation.failed', data: { status: 'failed' } });
      await deliver('default/cart-1/completed', { type: 'operation.succeeded', data: world.api[0].get('cart-1') });
      const again = await audit({ ...input(ops, records), webhooks: receiver });
      expect(again.violations).toEqual([expect.objectContaining({ rule: 'webhooks: the event is the outcome', key: 'pay-1' })]);
    });
  });
});
