// What a worker checks of its own definitions before it polls: a base URL for every service
// their declared calls speak to, a registered activity for every one their steps name. Each
// missing piece is one line naming it.
import { describe, expect, it } from 'vitest';
import { definitionProblems } from '../../worker/start-checks.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { RequestBody, Type, type StepDefinition } from '../../workflows/define.js';

const weigh: StepDefinition = {
  name: 'weigh',
  keySuffix: 'weigh',
  service: 'scales',
  call: { kind: 'activity', activity: 'weighParcel' },
  businessErrors: {},
  compensation: { name: 'unweigh', call: { kind: 'activity', activity: 'forgetWeight' } },
};

const catalog = builtInCatalog.with([
  {
    type: 'weighing',
    plural: 'weighings',
    description: 'weigh a parcel',
    request: RequestBody('a parcel', { grams: Type.Integer() }),
    steps: [weigh],
    unavailableCode: 'scales_unavailable',
  },
]);

describe("the worker's check of its own definitions", () => {
  it('finds nothing missing when every service has a URL and every activity is registered', () => {
    const has = { services: ['bank', 'reservations'], activities: ['weighParcel', 'forgetWeight', 'chargePayment'] };
    expect(definitionProblems(catalog, has)).toEqual([]);
  });

  it('names each activity a step or compensation calls that the worker does not register', () => {
    const has = { services: ['bank', 'reservations'], activities: ['weighParcels'] };
    expect(definitionProblems(catalog, has)).toEqual([
      'no activities.ts of RETRYSAFE_OPERATIONS registers the activity weighParcel, which an operation calls',
      'no activities.ts of RETRYSAFE_OPERATIONS registers the activity forgetWeight, which an operation calls',
    ]);
  });

  it('names each service a declared call speaks to that has no base URL', () => {
    const has = { services: ['bank'], activities: ['weighParcel', 'forgetWeight'] };
    expect(definitionProblems(catalog, has)).toEqual([
      'RETRYSAFE_SERVICES has no base URL for service reservations, which an operation calls',
    ]);
  });
});
