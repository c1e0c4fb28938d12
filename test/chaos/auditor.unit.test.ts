// The chaos auditor must be able to fail: fed ledgers and operation resources that break
// each invariant (served over real HTTP by a small stand-in), it names the invariant and
// the key; fed a consistent world, it finds nothing. It reads every operation through its
// definition's steps: a payment's charge, a checkout's hold and charge, a transfer's debit
// and credit.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, type AuditInput } from '../../tools/chaos/auditor.js';
import { outcomeSignature, type OpRecord } from '../../tools/chaos/client.js';
import type { PlannedOp } from '../../tools/chaos/plan.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../tools/chaos/webhook-receiver.js';
import { Webhook } from 'standardwebhooks';

type Doc = Record<string, unknown>;

/** What the stand-in serves: per path, per server (api-0, api-1, bank, reservations). */
interface World {
  api: [Map<string, Doc>, Map<string, Doc>];
  charges: Map<string, Doc>;
  credits: Map<string, Doc>;
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
    await serve(
      (p) =>
        lookupIn(() => world.charges, '/charges/')(p) ??
        lookupIn(() => world.credits, '/credits/')(p) ??
        lookupIn(() => world.accounts, '/accounts/')(p),
    ),
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
    tenant: 'default',
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
    credits: new Map(),
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

function input(
  ops: PlannedOp[],
  records: Map<string, OpRecord>,
  initialBalances: Record<string, number> = { acc_a: 10_000 },
): AuditInput {
  return {
    apiUrls: [urls[0]!, urls[1]!],
    services: { bank: urls[2]!, reservations: urls[3]! },
    ops,
    records,
    initialBalances,
    initialStock: { sku_a: 100 },
  };
}

/** Sets an operation's resource on both instances, and what its client saw. */
function resourceOf(records: Map<string, OpRecord>, key: string, resource: Doc): void {
  world.api[0].set(key, resource);
  world.api[1].set(key, { ...resource });
  records.get(key)!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(resource) }];
}

/**
 * The consistent world plus a succeeded transfer of 300 from acc_a to acc_b (opened with
 * 5 000): the bank holds its debit under `<wf>/debit` and its credit under `<wf>/credit`.
 */
function withTransfer() {
  const { ops, records } = consistentWorld();
  const op: PlannedOp = {
    ...plannedOp('move-1', 'payment', 300),
    type: 'transfer',
    body: { from: 'acc_a', to: 'acc_b', amount: 300, currency: 'EUR' },
  };
  records.set('move-1', { op, accepted: true, outcomes: [], requests: 1, timedOut: false });
  resourceOf(records, 'move-1', { key: 'move-1', status: 'succeeded', result: { debitId: 'ch_9', creditId: 'cr_9' } });
  world.charges.set('default/move-1/debit', { status: 'captured', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
  world.credits.set('default/move-1/credit', { status: 'credited', creditId: 'cr_9', account: 'acc_b', amount: 300 });
  world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 - 300 });
  world.accounts.set('acc_b', { id: 'acc_b', balance: 5_000 + 300 });
  return { ops: [...ops, op], records, balances: { acc_a: 10_000, acc_b: 5_000 } };
}

describe('the chaos auditor', () => {
  it('finds nothing wrong in a consistent world', async () => {
    const { ops, records } = consistentWorld();
    const result = await audit(input(ops, records));
    expect(result.violations).toEqual([]);
    expect(result.outcomes).toMatchObject({ succeeded: 2, failed: 0, open: 0 });
    expect(result.conservation.accounts).toEqual([
      { id: 'acc_a', initial: 10_000, final: 8_800, charged: 1_200, credited: 0, netCharged: 1_200, succeeded: 1_200 },
    ]);
    expect(result.conservation.money).toEqual({ fell: 1_200, chargedOut: 1_200, movedBetweenAccounts: 0 });
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
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('all accounts together fell by 1700; succeeded operations charged 1200 out of them'),
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

  it('accepts a transfer that debited one account and credited another: money moved, none charged out', async () => {
    const { ops, records, balances } = withTransfer();
    const result = await audit(input(ops, records, balances));
    expect(result.violations).toEqual([]);
    expect(result.outcomes.byType).toEqual({
      payment: { succeeded: 1, failed: 0 },
      checkout: { succeeded: 1, failed: 0 },
      transfer: { succeeded: 1, failed: 0 },
    });
    expect(result.conservation.accounts).toEqual([
      { id: 'acc_a', initial: 10_000, final: 8_500, charged: 1_500, credited: 0, netCharged: 1_500, succeeded: 1_500 },
      { id: 'acc_b', initial: 5_000, final: 5_300, charged: 0, credited: 300, netCharged: -300, succeeded: -300 },
    ]);
    expect(result.conservation.money).toEqual({ fell: 1_200, chargedOut: 1_200, movedBetweenAccounts: 300 });
  });

  it('when a succeeded transfer credited without a debit, reports invariant 1 and the money it made', async () => {
    const { ops, records, balances } = withTransfer();
    world.charges.delete('default/move-1/debit');
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: 'I1 money moves at most once',
        key: 'move-1',
        message: 'succeeded, but debit_source is none at the bank',
      }),
    );
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('all accounts together fell by 900'),
      }),
    );
  });

  it('when a transfer credited another account than asked, or its result names another debit, reports invariant 1', async () => {
    const { ops, records, balances } = withTransfer();
    world.credits.set('default/move-1/credit', { status: 'credited', creditId: 'cr_9', account: 'acc_a', amount: 300 });
    resourceOf(records, 'move-1', { key: 'move-1', status: 'succeeded', result: { debitId: 'ch_other', creditId: 'cr_9' } });
    const { violations } = await audit(input(ops, records, balances));
    const move = violations.filter((v) => v.key === 'move-1');
    expect(move).toContainEqual(
      expect.objectContaining({ message: 'credit_destination: the bank moved 300 to acc_a; the request was 300 to acc_b' }),
    );
    expect(move).toContainEqual(expect.objectContaining({ message: expect.stringContaining('result.debitId ch_other') }));
  });

  it('when a failed transfer kept its credit after reversing its debit, reports invariant 1 and the account it fed', async () => {
    const { ops, records, balances } = withTransfer();
    resourceOf(records, 'move-1', {
      key: 'move-1',
      status: 'failed',
      error: { code: 'transfer_unavailable', compensations: ['reverse_credit', 'reverse_debit'] },
    });
    world.charges.set('default/move-1/debit', { status: 'reversed', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: 'I1 money moves at most once',
        key: 'move-1',
        message: 'failed (transfer_unavailable), but credit_destination is credited',
      }),
    );
    expect(violations).toContainEqual(
      expect.objectContaining({ rule: 'conservation of money', message: expect.stringMatching(/^acc_b: balance fell by -300/) }),
    );
  });

  it("knows the failure codes from the registry: a transfer's destination_not_found is one, an invented code is not", async () => {
    const { ops, records, balances } = withTransfer();
    const refused = { code: 'destination_not_found', compensations: ['reverse_debit'] };
    resourceOf(records, 'move-1', { key: 'move-1', status: 'failed', error: refused });
    world.charges.set('default/move-1/debit', { status: 'reversed', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
    world.credits.delete('default/move-1/credit');
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    world.accounts.set('acc_b', { id: 'acc_b', balance: 5_000 });
    // Planned to succeed (ample accounts), it could not have been refused: the plan's own check.
    expect((await audit(input(ops, records, balances))).violations).toEqual([
      expect.objectContaining({ rule: 'plan: designed to succeed', key: 'move-1' }),
    ]);
    ops.at(-1)!.profile = 'doomed';
    ops.at(-1)!.expectedFailure = ['destination_not_found', 'account_not_found', 'transfer_unavailable'];
    expect((await audit(input(ops, records, balances))).violations).toEqual([]);

    resourceOf(records, 'move-1', { key: 'move-1', status: 'failed', error: { ...refused, code: 'destination_gone' } });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations.map((v) => v.rule)).toEqual(['API: stable error codes', 'plan: designed to fail']);
  });

  it('when a cancel was answered 202, an operation that still succeeded or failed otherwise breaks the cancel rule', async () => {
    const { ops, records } = consistentWorld();
    records.get('pay-1')!.cancel = { status: 202, step: 'charge_payment' };
    resourceOf(records, 'pay-1', { key: 'pay-1', status: 'succeeded', cancelRequested: true, result: { chargeId: 'ch_1' } });
    records.get('cart-1')!.cancel = { status: 202, step: null };
    const refused = {
      key: 'cart-1',
      status: 'failed',
      cancelRequested: true,
      error: { code: 'out_of_stock', compensations: [] },
    };
    resourceOf(records, 'cart-1', refused);
    world.charges.delete('default/cart-1/charge');
    world.reservations.delete('default/cart-1/reserve');
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations } = await audit(input(ops, records));
    const broken = violations.filter((v) => v.rule === 'API: a cancel answered 202 ends cancelled');
    expect(broken).toEqual([
      expect.objectContaining({
        key: 'pay-1',
        message: 'a cancel was answered 202 at step charge_payment, yet the operation succeeded',
      }),
      expect.objectContaining({
        key: 'cart-1',
        message: 'a cancel was answered 202 before the first step, yet the operation failed with out_of_stock',
      }),
    ]);
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
