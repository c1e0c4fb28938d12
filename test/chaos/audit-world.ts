// The world the chaos auditor's tests feed it: the operations API of both instances, the
// bank's and the reservation service's rows, served over real HTTP by small stand-ins
// on loopback, and a consistent starting point (a succeeded payment and checkout) that
// each test breaks in one way. Keys are derived as the product derives them.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import type { AuditInput } from '../../tools/chaos/auditor.js';
import type { PlannedOp } from '../../tools/chaos/plan.js';
import { outcomeSignature, type OpRecord } from '../../tools/chaos/records.js';
import { completionEventId, downstreamKey, operationRef } from '../../workflows/identity.js';
import { plannedOp } from './fixtures.js';

export type Doc = Record<string, unknown>;

/** What the stand-ins serve: per path, per server (api-0, api-1, bank, reservations). */
interface World {
  api: [Map<string, Doc>, Map<string, Doc>];
  charges: Map<string, Doc>;
  credits: Map<string, Doc>;
  accounts: Map<string, Doc>;
  reservations: Map<string, Doc>;
  inventory: Map<string, Doc>;
}

const TENANT = 'default';

/** The key a step of the operation `key` sends downstream (`suffix` is the step's, as its definition says). */
export const stepKey = (key: string, suffix: string) => downstreamKey(operationRef(TENANT, key).workflowId, suffix);
/** The webhook-id of the operation's completion event. */
export const eventId = (key: string) => completionEventId(operationRef(TENANT, key));

export let world: World;
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

/** Starts the stand-ins before the file's tests, and stops them after. */
export function useAuditWorld(): void {
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
    servers.length = 0;
    urls.length = 0;
  });
}

function auditedOp(key: string, type: 'payment' | 'checkout', amount: number): PlannedOp {
  return plannedOp({
    key,
    tenant: TENANT,
    type,
    body: {
      account: 'acc_a',
      amount,
      currency: 'EUR',
      ...(type === 'checkout' ? { items: [{ sku: 'sku_a', quantity: 2 }] } : {}),
    },
  });
}

/** A consistent world: one succeeded payment of 500 and one succeeded checkout of 700 (2 × sku_a). */
export function consistentWorld(): { ops: PlannedOp[]; records: Map<string, OpRecord> } {
  const pay = auditedOp('pay-1', 'payment', 500);
  const cart = auditedOp('cart-1', 'checkout', 700);
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
      [stepKey('pay-1', 'charge'), { status: 'captured', chargeId: 'ch_1', account: 'acc_a', amount: 500 }],
      [stepKey('cart-1', 'charge'), { status: 'captured', chargeId: 'ch_2', account: 'acc_a', amount: 700 }],
    ]),
    credits: new Map(),
    accounts: new Map([['acc_a', { id: 'acc_a', balance: 10_000 - 1_200 }]]),
    reservations: new Map([
      [stepKey('cart-1', 'reserve'), { status: 'confirmed', reservationId: 'rs_1', items: [{ sku: 'sku_a', quantity: 2 }] }],
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

export function input(
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
export function resourceOf(records: Map<string, OpRecord>, key: string, resource: Doc): void {
  world.api[0].set(key, resource);
  world.api[1].set(key, { ...resource });
  records.get(key)!.outcomes = [{ via: 'api-0 POST', signature: outcomeSignature(resource) }];
}

/**
 * The consistent world plus a succeeded transfer of 300 from acc_a to acc_b (opened with
 * 5 000): the bank holds its debit under `<wf>/debit` and its credit under `<wf>/credit`.
 */
export function withTransfer() {
  const { ops, records } = consistentWorld();
  const op: PlannedOp = {
    ...auditedOp('move-1', 'payment', 300),
    type: 'transfer',
    body: { from: 'acc_a', to: 'acc_b', amount: 300, currency: 'EUR' },
  };
  records.set('move-1', { op, accepted: true, outcomes: [], requests: 1, timedOut: false });
  resourceOf(records, 'move-1', { key: 'move-1', status: 'succeeded', result: { debitId: 'ch_9', creditId: 'cr_9' } });
  world.charges.set(stepKey('move-1', 'debit'), { status: 'captured', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
  world.credits.set(stepKey('move-1', 'credit'), { status: 'credited', creditId: 'cr_9', account: 'acc_b', amount: 300 });
  world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 - 300 });
  world.accounts.set('acc_b', { id: 'acc_b', balance: 5_000 + 300 });
  return { ops: [...ops, op], records, balances: { acc_a: 10_000, acc_b: 5_000 } };
}
