// defineOperation checks a definition's facts once, at load: a definition it accepts makes a
// program the workflow can run, and one it refuses is refused with a message naming the
// operation and what is wrong, before any API route or worker exists. Outside folders export
// whatever they export, so every shape is checked, not only what the types allow.
import { describe, expect, it } from 'vitest';
import {
  Account,
  Amount,
  bankCharge,
  Currency,
  defineOperation,
  keyedHttpStep,
  RequestBody,
  Type,
  type OperationDefinition,
  type StepDefinition,
} from '../../workflows/define.js';

const request = RequestBody('a parcel', {
  account: Account('who pays'),
  amount: Amount,
  currency: Currency,
  size: Type.String(),
});

const ship: StepDefinition = keyedHttpStep({
  name: 'ship_parcel',
  keySuffix: 'ship',
  service: 'shipping',
  collection: '/shipments',
  body: { size: 'size', speed: { setting: 'speed' }, carrier: { value: 'post' } },
  businessErrors: { no_route: 'no_route' },
  undo: { name: 'cancel_shipment', action: 'cancel' },
  result: { shipmentId: 'id' },
  present: ['created'],
});

const parcel = (): OperationDefinition => ({
  type: 'parcel',
  plural: 'parcels',
  description: 'charge, then ship',
  request,
  settings: { speed: { default: 2, minimum: 1, maximum: 5, description: 'days' } },
  steps: [
    bankCharge({
      name: 'charge_parcel',
      keySuffix: 'charge',
      account: 'account',
      undo: 'refund_parcel',
      resultField: 'chargeId',
    }),
    ship,
  ],
  unavailableCode: 'parcel_unavailable',
  fingerprint: ['account', 'amount'],
});

/** The parcel with its first step changed by `change`. */
const withStep = (change: (step: Record<string, unknown>) => void) => {
  const definition = parcel();
  const step = structuredClone(definition.steps[0]) as unknown as Record<string, unknown>;
  change(step);
  return { ...definition, steps: [step as unknown as StepDefinition, ship] };
};

/** The parcel with its first step's call changed by `change`. */
const withCall = (change: (call: Record<string, unknown>) => void) =>
  withStep((step) => change(step.call as Record<string, unknown>));

describe('defineOperation', () => {
  it('accepts a well-formed definition and hands it back unchanged', () => {
    const definition = parcel();
    expect(defineOperation(definition)).toBe(definition);
  });

  it('accepts a step with code of its own and a constant-only body', () => {
    const quote = {
      name: 'quote_parcel',
      keySuffix: 'quote',
      service: 'quotes',
      call: { kind: 'activity' as const, activity: 'quoteParcel', input: { size: 'size' } },
      businessErrors: {},
    };
    expect(() => defineOperation({ ...parcel(), steps: [quote] })).not.toThrow();
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 7],
    ['a list', [parcel()]],
  ])('refuses a definition that is %s, saying what it got', (_what, value) => {
    expect(() => defineOperation(value as OperationDefinition)).toThrow(/^an operation definition must be an object, not /);
  });

  it.each<[string, Partial<Record<keyof OperationDefinition, unknown>>, RegExp]>([
    ['an upper-case type', { type: 'Parcel' }, /^operation "Parcel": its type must match/],
    ['a type of 41 characters', { type: 'p'.repeat(41) }, /its type must match \[a-z\]\[a-z0-9_\]\{0,39\}/],
    ['a type that is not a string', { type: 42 }, /^operation 42: its type must match/],
    ['a plural with a slash', { plural: 'par/cels' }, /^operation "parcel": its plural must match/],
    ['a missing plural', { plural: undefined }, /its plural must match/],
    ['an empty description', { description: ' ' }, /^operation "parcel": it needs a description/],
    ['a request that is a string schema', { request: Type.String() }, /its request must be an object schema/],
    ['a missing request', { request: undefined }, /its request must be an object schema/],
    ['a check that is not a function', { check: 'no' }, /^operation "parcel": its check must be a function/],
    ['a summary that is not a function', { summary: {} }, /its summary must be a function/],
    ['details that are not a function', { details: ['x'] }, /its details must be a function/],
    ['no steps', { steps: [] }, /^operation "parcel": it needs at least one step/],
    ['steps that are not a list', { steps: { charge: ship } }, /it needs at least one step/],
    ['an unavailableCode in camel case', { unavailableCode: 'parcelDown' }, /its unavailableCode must be snake case/],
    ['a fingerprint that is a string', { fingerprint: 'account' }, /its fingerprint must be a list of request fields/],
    ['a fingerprinted field the request lacks', { fingerprint: ['weight'] }, /fingerprinted field weight is not in the request/],
  ])('refuses %s, naming the operation and the rule', (_what, change, message) => {
    expect(() => defineOperation({ ...parcel(), ...change } as OperationDefinition)).toThrow(message);
  });

  it.each<[string, unknown, RegExp]>([
    [
      'a setting name in snake case',
      { hold_time: { default: 1, minimum: 1, maximum: 2 } },
      /setting name "hold_time" must be camel case/,
    ],
    ['a setting that is a number', { speed: 3 }, /setting speed must be \{ default, minimum, maximum, description \}/],
    [
      'a default below its minimum',
      { speed: { default: 0, minimum: 1, maximum: 5 } },
      /setting speed needs integer minimum <= default <= maximum/,
    ],
    ['a default above its maximum', { speed: { default: 6, minimum: 1, maximum: 5 } }, /setting speed needs integer/],
    ['a fractional default', { speed: { default: 1.5, minimum: 1, maximum: 5 } }, /setting speed needs integer/],
    ['a missing maximum', { speed: { default: 1, minimum: 1 } }, /setting speed needs integer/],
  ])('refuses %s, naming the setting', (_what, settings, message) => {
    expect(() => defineOperation({ ...parcel(), settings } as OperationDefinition)).toThrow(message);
  });

  it('refuses a step that reads a setting the definition does not declare, naming both', () => {
    const { settings: _dropped, ...unset } = parcel();
    expect(() => defineOperation(unset)).toThrow(/ship_parcel: reads the setting speed, which the program does not hold/);
  });

  it('refuses a step that reads a request field the request lacks, naming both', () => {
    const definition = withCall((call) => (call.body = { ...(call.body as object), account: 'payer' }));
    expect(() => defineOperation(definition)).toThrow(
      /^operation "parcel": charge_parcel reads payer, which is not in the request/,
    );
  });

  it('refuses a compensation that reads a request field the request lacks, naming its step', () => {
    const definition = withStep((step) => {
      (step.compensation as { call: { body?: unknown } }).call.body = { reason: 'why' };
    });
    expect(() => defineOperation(definition)).toThrow(/charge_parcel reads why, which is not in the request/);
  });

  it.each<[string, (step: Record<string, unknown>) => void, RegExp]>([
    ['a step without a name', (s) => delete s.name, /a step has no name/],
    [
      'a step name in camel case',
      (s) => (s.name = 'chargeParcel'),
      /step or compensation name "chargeParcel" must be snake case/,
    ],
    [
      'a compensation name with a dash',
      (s) => ((s.compensation as { name: string }).name = 'refund-parcel'),
      /name "refund-parcel" must be snake case/,
    ],
    ['a step named like another step', (s) => (s.name = 'ship_parcel'), /ship_parcel is named twice/],
    [
      'a compensation named like its step',
      (s) => ((s.compensation as { name: string }).name = 'charge_parcel'),
      /charge_parcel is named twice/,
    ],
    ['a key suffix with a slash', (s) => (s.keySuffix = 'a/b'), /charge_parcel: key suffix must match/],
    ['a service in upper case', (s) => (s.service = 'Bank'), /charge_parcel: service must match/],
    [
      'business errors that are a list',
      (s) => (s.businessErrors = ['insufficient_funds']),
      /charge_parcel: businessErrors must map codes to codes/,
    ],
    [
      'business errors mapping to a number',
      (s) => (s.businessErrors = { insufficient_funds: 402 }),
      /businessErrors must map codes to codes/,
    ],
    [
      'a result mapping to a number',
      (s) => (s.result = { chargeId: 1 }),
      /charge_parcel: result must map fields to answer fields/,
    ],
    ['a compensation that is a string', (s) => (s.compensation = 'refund'), /charge_parcel: compensation must be an object/],
    [
      'an effect path without a leading /',
      (s) => (s.effect = { path: 'charges/{key}', present: ['captured'] }),
      /charge_parcel: its effect path must start with one \//,
    ],
    [
      'an effect path naming another host',
      (s) => (s.effect = { path: '//evil/{key}', present: [] }),
      /its effect path must start with one \//,
    ],
  ])('refuses %s, naming the step', (_what, change, message) => {
    expect(() => defineOperation(withStep(change))).toThrow(message);
  });

  it.each<[string, (call: Record<string, unknown>) => void, RegExp]>([
    ['a GET', (c) => (c.method = 'GET'), /charge_parcel: method must be one of POST, PUT, PATCH, DELETE/],
    [
      'a path without a leading /',
      (c) => (c.path = 'charges'),
      /charge_parcel: path "charges" must be a path starting with one \//,
    ],
    ['a path naming another host', (c) => (c.path = '//evil.example/charges'), /path "\/\/evil.example\/charges" must be a path/],
    ['a path with a query', (c) => (c.path = '/charges?x=1'), /path "\/charges\?x=1" must be a path starting with one \//],
    [
      'a path with a .. segment',
      (c) => (c.path = '/charges/../admin'),
      /path "\/charges\/..\/admin" must not hold . or .. segments/,
    ],
    ['a path with another placeholder', (c) => (c.path = '/charges/{id}'), /path "\/charges\/\{id\}" may only hold \{key\}/],
    ['a body that is a list', (c) => (c.body = ['amount']), /charge_parcel: body must be a field map/],
    [
      'a body field named __proto__',
      (c) => (c.body = JSON.parse('{"__proto__": "amount"}')),
      /body has an invalid field name "__proto__"/,
    ],
    [
      'a body field from an empty name',
      (c) => (c.body = { amount: '' }),
      /body field amount must name a request field, \{ setting \} or \{ value \}/,
    ],
    [
      'a body field with two sources',
      (c) => (c.body = { amount: { setting: 'speed', value: 1 } }),
      /body field amount must name a request field/,
    ],
    ['a body field that is a number', (c) => (c.body = { amount: 5 }), /body field amount must name a request field/],
    ['a call of another kind', (c) => (c.kind = 'grpc'), /charge_parcel: call kind must be http or activity/],
    [
      'an activity name with a dash',
      (c) => Object.assign(c, { kind: 'activity', activity: 'charge-it' }),
      /charge_parcel: activity must match/,
    ],
    [
      'an activity input that is a string',
      (c) => Object.assign(c, { kind: 'activity', activity: 'chargeIt', input: 'amount' }),
      /charge_parcel: input must be a field map/,
    ],
    [
      'an activity named like a step',
      (c) => Object.assign(c, { kind: 'activity', activity: 'ship_parcel' }),
      /activity ship_parcel has the name of a step/,
    ],
  ])("refuses a step's call with %s, naming the step", (_what, change, message) => {
    expect(() => defineOperation(withCall(change))).toThrow(message);
  });

  it('refuses a step that is not an object', () => {
    expect(() => defineOperation({ ...parcel(), steps: [null as unknown as StepDefinition] })).toThrow(/a step has no name/);
  });

  it('refuses a step without a call, naming the step', () => {
    expect(() => defineOperation(withStep((s) => delete s.call))).toThrow(/charge_parcel: its call must be an object/);
  });

  it("refuses a compensation's call with a bad path, naming the compensation", () => {
    const definition = withStep((s) => ((s.compensation as { call: { path: string } }).call.path = '/charges/{key}/../x'));
    expect(() => defineOperation(definition)).toThrow(
      /refund_parcel: path "\/charges\/\{key\}\/..\/x" must not hold . or .. segments/,
    );
  });
});
