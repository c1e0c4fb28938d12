// The catalog checks every definition together: one type, one collection and one meaning per
// step name across all of them, built-in and outside alike; and it answers what a worker
// needs to run them (the services declared calls speak to, the activities with code of their
// own). A refusal names the definitions and the thing they clash on.
import { describe, expect, it } from 'vitest';
import { builtInCatalog, DefinitionCatalog } from '../../workflows/catalog.js';
import { BUILT_IN_DEFINITIONS } from '../../workflows/definitions/index.js';
import {
  Account,
  Amount,
  bankCharge,
  Currency,
  keyedHttpStep,
  RequestBody,
  type OperationDefinition,
  type StepDefinition,
} from '../../workflows/define.js';

const request = RequestBody('a parcel', { account: Account('who pays'), amount: Amount, currency: Currency });

const ship = keyedHttpStep({
  name: 'ship_parcel',
  keySuffix: 'ship',
  service: 'shipping',
  collection: '/shipments',
  body: {},
  businessErrors: {},
  undo: { name: 'cancel_shipment', action: 'cancel' },
  result: {},
  present: ['created'],
});

const label: StepDefinition = {
  name: 'print_label',
  keySuffix: 'label',
  service: 'labels',
  call: { kind: 'activity', activity: 'printLabel', input: { account: 'account' } },
  businessErrors: {},
  compensation: { name: 'void_label', call: { kind: 'activity', activity: 'voidLabel' } },
};

const operation = (type: string, steps: StepDefinition[], plural = `${type}s`): OperationDefinition => ({
  type,
  plural,
  description: `a ${type}`,
  request,
  steps,
  unavailableCode: `${type}_unavailable`,
});

describe('the definition catalog', () => {
  it('holds the built-ins in their order, found by type', () => {
    expect(builtInCatalog.types).toEqual(BUILT_IN_DEFINITIONS.map((d) => d.type));
    expect(builtInCatalog.all).toEqual(BUILT_IN_DEFINITIONS);
    expect(builtInCatalog.get('payment')?.plural).toBe('payments');
    expect(builtInCatalog.get('parcel')).toBeUndefined();
    expect(builtInCatalog.has('checkout')).toBe(true);
    expect(builtInCatalog.has('parcel')).toBe(false);
    expect(builtInCatalog.has(42)).toBe(false);
  });

  it('refuses a type defined twice, naming it', () => {
    expect(() => new DefinitionCatalog([operation('parcel', [ship]), operation('parcel', [ship], 'boxes')])).toThrow(
      'operation type parcel is defined twice',
    );
  });

  it('refuses a collection defined twice, naming it and both types', () => {
    expect(() => new DefinitionCatalog([operation('parcel', [ship]), operation('box', [ship], 'parcels')])).toThrow(
      "the collection /v1/parcels of box is already parcel's",
    );
  });

  it('refuses a malformed definition as defineOperation does, naming it', () => {
    const unnamed = { ...operation('parcel', [ship]), plural: 'Parcels' };
    expect(() => new DefinitionCatalog([unnamed])).toThrow('operation "parcel": its plural must match');
  });

  it('lets operations share a step that is the same thing (the charge of a payment and of a checkout)', () => {
    const charge = bankCharge({
      name: 'charge_parcel',
      keySuffix: 'charge',
      account: 'account',
      undo: 'refund',
      resultField: 'id',
    });
    const catalog = new DefinitionCatalog([operation('parcel', [charge, ship]), operation('box', [charge])]);
    expect(catalog.types).toEqual(['parcel', 'box']);
    expect(builtInCatalog.get('checkout')?.steps.map((s) => s.name)).toContain('charge_payment');
  });

  it.each<[string, Partial<StepDefinition>]>([
    ['its key suffix', { keySuffix: 'send' }],
    ['its service', { service: 'couriers' }],
    ['its compensation', { compensation: { name: 'recall_shipment', call: { kind: 'http', method: 'POST', path: '/x' } } }],
    ['having no compensation', { compensation: undefined }],
  ])('refuses a step name shared by two operations that differ in %s, naming the step and both types', (_what, change) => {
    const other = { ...ship, ...change };
    expect(() => new DefinitionCatalog([operation('parcel', [ship]), operation('box', [other])])).toThrow(
      'step ship_parcel of box differs from the step of that name in parcel',
    );
  });

  it('says which services declared calls speak to, and which activities with code its steps call', () => {
    const catalog = new DefinitionCatalog([operation('parcel', [ship, label])]);
    expect(catalog.declaredServices).toEqual(['shipping']);
    expect(catalog.activityNames).toEqual(['printLabel', 'voidLabel']);
    expect(builtInCatalog.declaredServices.sort()).toEqual(['bank', 'reservations']);
    expect(builtInCatalog.activityNames).toEqual([]);
  });

  it('counts a service whose step is code but whose compensation is a declared call', () => {
    const mixed = {
      ...label,
      compensation: { name: 'void_label', call: { kind: 'http' as const, method: 'DELETE' as const, path: '/labels/{key}' } },
    };
    const catalog = new DefinitionCatalog([operation('parcel', [mixed])]);
    expect(catalog.declaredServices).toEqual(['labels']);
    expect(catalog.activityNames).toEqual(['printLabel']);
  });

  it('with() adds definitions checked together with its own, and leaves itself as it was', () => {
    const more = builtInCatalog.with([operation('parcel', [ship])]);
    expect(more.types).toEqual([...builtInCatalog.types, 'parcel']);
    expect(builtInCatalog.has('parcel')).toBe(false);
    expect(more.declaredServices).toContain('shipping');
    expect(builtInCatalog.declaredServices).not.toContain('shipping');
  });

  it.each<[string, OperationDefinition, string]>([
    ['a built-in type', operation('payment', [ship], 'parcels'), 'operation type payment is defined twice'],
    [
      'a built-in collection',
      operation('parcel', [ship], 'payments'),
      "the collection /v1/payments of parcel is already payment's",
    ],
    [
      "a built-in step's name for another call",
      operation('parcel', [{ ...ship, name: 'charge_payment' }]),
      'step charge_payment of parcel differs from the step of that name in payment',
    ],
  ])('with() refuses a definition that takes %s, naming it', (_what, definition, message) => {
    expect(() => builtInCatalog.with([definition])).toThrow(message);
  });
});
