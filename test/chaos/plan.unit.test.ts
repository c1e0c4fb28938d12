// The chaos plan from the catalog: every type of it in the mix, each request body filled
// from its definition's schema with the sandboxes' vocabulary (and valid by that schema
// and the definition's own rules), the failures a doomed operation may meet derived from
// its steps, and a flood of one tenant's new operations inside the fault phase.
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { allOps, buildPlan, countByType } from '../../tools/chaos/plan.js';
import { FLOOD, TENANTS } from '../../tools/chaos/settings.js';
import { AMPLE_ACCOUNTS, MISSING_ACCOUNT, moneyOf } from '../../tools/chaos/vocabulary.js';
import { defineOperation, type OperationDefinition } from '../../workflows/definition.js';
import { operationRef } from '../../workflows/identity.js';
import { builtInCatalog, DefinitionCatalog } from '../../workflows/catalog.js';

const plan = buildPlan({ seed: 7, durationMs: 300_000, ops: 600, topology: 'embedded' });

/** A definition against a service the sandboxes know nothing of, with the given request fields. */
function outside(type: string, request: ReturnType<typeof Type.Object>): OperationDefinition {
  return defineOperation({
    type,
    plural: `${type}s`,
    description: 'a test operation',
    request,
    steps: [
      {
        name: `ship_${type}`,
        keySuffix: 'ship',
        service: 'shipping',
        call: { kind: 'http', method: 'POST', path: '/shipments' },
        businessErrors: {},
      },
    ],
    unavailableCode: 'shipping_unavailable',
  });
}

describe('the chaos plan', () => {
  it('draws every type of the catalog, and says how many of each', () => {
    const counts = countByType(plan.ops);
    expect(Object.keys(counts)).toEqual(builtInCatalog.types);
    for (const type of builtInCatalog.types) expect(counts[type], type).toBeGreaterThan(100);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(600);
  });

  it("fills each request from its definition's schema, valid by it and by the definition's own rules", () => {
    for (const op of allOps(plan)) {
      const definition = builtInCatalog.get(op.type)!;
      expect([...Value.Errors(definition.request, op.body)], `${op.key} ${JSON.stringify(op.body)}`).toEqual([]);
      expect(definition.check?.(op.body as never) ?? [], op.key).toEqual([]);
    }
    // A transfer's payee is never its payer, though both are drawn from the same accounts.
    const transfers = plan.ops.filter((o) => o.type === 'transfer');
    expect(transfers.every((o) => o.body.from !== o.body.to)).toBe(true);
  });

  it('spoils what a definition has: a poor payer, a missing payee, a sold-out SKU; and derives the codes each meets', () => {
    const doomed = plan.ops.filter((o) => o.profile === 'doomed');
    const payment = doomed.find((o) => o.type === 'payment')!;
    expect(payment.body.account).toBe('acc_chaos_poor');
    expect(payment.expectedFailure?.sort()).toEqual(['insufficient_funds', 'payment_unavailable']);

    const missingPayee = doomed.find((o) => o.type === 'transfer' && o.body.to === MISSING_ACCOUNT)!;
    expect(AMPLE_ACCOUNTS).toContain(missingPayee.body.from);
    // The debit maps the bank's account_not_found to itself, the credit to destination_not_found.
    expect(missingPayee.expectedFailure?.sort()).toEqual(['account_not_found', 'destination_not_found', 'transfer_unavailable']);

    const soldOut = doomed.find((o) => o.type === 'checkout' && JSON.stringify(o.body.items).includes('sku_chaos_soldout'))!;
    // The hold is the first step: nothing after it can be fenced before it refuses.
    expect(soldOut.expectedFailure?.sort()).toEqual(['inventory_unavailable', 'out_of_stock']);
    // Only a sold-out SKU and a poor payer doom a checkout: it has no payee.
    expect(doomed.filter((o) => o.type === 'checkout').every((o) => moneyOf(o.body).payees.length === 0)).toBe(true);
  });

  it('plans a flood of one tenant inside the fault phase: its first requests within a second, nothing sent after', () => {
    expect(plan.flood.tenant).toBe(TENANTS.flood);
    expect(plan.flood.ops).toHaveLength(FLOOD.size);
    expect(plan.flood.atMs).toBeGreaterThanOrEqual(0.3 * 300_000);
    expect(plan.flood.atMs).toBeLessThanOrEqual(0.5 * 300_000);
    for (const op of plan.flood.ops) {
      expect(op).toMatchObject({
        tenant: TENANTS.flood,
        flood: true,
        profile: 'normal',
        prefer: FLOOD.prefer,
        concurrency: 1,
        firstApi: FLOOD.api,
      });
      expect(op.atMs - plan.flood.atMs).toBeGreaterThanOrEqual(0);
      expect(op.atMs - plan.flood.atMs).toBeLessThanOrEqual(FLOOD.spreadMs);
      expect(op.lateReplaysMs).toEqual([]);
      expect(op.changedAmount).toBeUndefined();
    }
    const keys = allOps(plan).map((o) => operationRef(o.tenant, o.key).workflowId);
    expect(new Set(keys).size).toBe(keys.length);
    // More than the places the flooding tenant may hold at the instance it floods while the other asks too (half the ceiling).
    expect(FLOOD.size).toBeGreaterThan(FLOOD.maxInFlight / 2);
  });

  it('refuses to plan a definition with a required field the sandboxes have no word for, naming the field', () => {
    const catalog = new DefinitionCatalog([
      outside('parcel', Type.Object({ amount: Type.Integer({ minimum: 1 }), parcelId: Type.String() })),
    ]);
    expect(() => buildPlan({ seed: 1, durationMs: 60_000, ops: 10, topology: 'embedded' }, catalog)).toThrow(
      'chaos: cannot fill parcel.parcelId',
    );
  });

  it('plans a definition without an account or a SKU only to succeed, and its optional fields are left out', () => {
    const catalog = new DefinitionCatalog([
      outside(
        'tip',
        Type.Object({ amount: Type.Integer({ minimum: 1 }), currency: Type.String(), note: Type.Optional(Type.String()) }),
      ),
    ]);
    const tips = buildPlan({ seed: 3, durationMs: 60_000, ops: 200, topology: 'embedded' }, catalog);
    expect(new Set(tips.ops.map((o) => o.profile))).toEqual(new Set(['normal']));
    for (const op of tips.ops) expect(Object.keys(op.body).sort()).toEqual(['amount', 'currency']);
  });
});
