// What the bench sends for each operation type: a request built from the type's own schema,
// valid at the API's edge, and the accounts and SKUs it names, read off what its steps send.
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { resourcesOf, sampleRequest } from '../../tools/bench/workload.js';
import { defineOperation } from '../../workflows/definition.js';
import { builtInCatalog } from '../../workflows/catalog.js';

describe('the bench requests', () => {
  it.each(builtInCatalog.types)('%s: a request its schema and rules accept, naming the bench resources', (type) => {
    const definition = builtInCatalog.get(type)!;
    const request = sampleRequest(definition, 'bench');
    expect(Value.Check(definition.request, request)).toBe(true);
    expect(definition.check?.(request as never) ?? []).toEqual([]);
  });

  it('names each free string after its field, so distinct fields name distinct resources', () => {
    expect(sampleRequest(builtInCatalog.get('transfer')!, 'b')).toEqual({
      from: 'b_from',
      to: 'b_to',
      amount: 1250,
      currency: 'EUR',
    });
    expect(sampleRequest(builtInCatalog.get('checkout')!, 'b')).toEqual({
      account: 'b_account',
      amount: 1250,
      currency: 'EUR',
      items: [{ sku: 'b_items_sku', quantity: 1 }],
    });
  });

  it("reads the accounts and SKUs off what the steps send: a hold's SKU, each bank movement's account and amount", () => {
    const checkout = builtInCatalog.get('checkout')!;
    const transfer = builtInCatalog.get('transfer')!;
    const c = resourcesOf(checkout, sampleRequest(checkout, 'c'));
    expect([...c.accounts]).toEqual([['c_account', { amount: 1250, currency: 'EUR' }]]);
    expect([...c.skus]).toEqual([['c_items_sku', 1]]);
    const t = resourcesOf(transfer, { from: 'x', to: 'y', amount: 7, currency: 'JPY' });
    expect([...t.accounts]).toEqual([
      ['x', { amount: 7, currency: 'JPY' }],
      ['y', { amount: 7, currency: 'JPY' }],
    ]);
    expect(t.skus.size).toBe(0);
    resourcesOf(transfer, { from: 'x', to: 'y', amount: 7, currency: 'JPY' }, c);
    expect([...c.accounts.keys()]).toEqual(['c_account', 'x', 'y']);
  });

  it('says which type it cannot build a valid request for, and why', () => {
    const step = {
      name: 'noop',
      keySuffix: 'noop',
      service: 'bank',
      call: { kind: 'http', method: 'POST', path: '/x' },
      businessErrors: {},
    } as const;
    const odd = defineOperation({
      type: 'odd',
      plural: 'odds',
      description: 'a request the bench cannot fill',
      request: Type.Object({ code: Type.String({ pattern: '^[0-9]{4}$' }) }),
      steps: [step],
      unavailableCode: 'odd_unavailable',
    });
    expect(() => sampleRequest(odd, 'bench')).toThrow(/^the bench cannot build a valid odd request from its schema: .*pattern/);
    const ruled = defineOperation({
      type: 'ruled',
      plural: 'ruleds',
      description: 'a rule across fields no request meets',
      request: Type.Object({ a: Type.String() }),
      check: () => [{ field: 'a', message: 'is never right' }],
      steps: [step],
      unavailableCode: 'ruled_unavailable',
    });
    expect(() => sampleRequest(ruled, 'bench')).toThrow(
      'the bench cannot build a valid ruled request from its schema: a is never right',
    );
  });
});
