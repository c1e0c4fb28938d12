// The client package's types are written out so that its declarations need nothing from
// the server; here the compiler holds them to the API's own schemas. These are type-level
// checks: `npx tsc --noEmit` (part of `npm test`) fails when a schema and a client type
// drift apart. The runtime half pins down the guard that stands in for the schemas when
// an answer arrives.
import type { Static } from 'typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PROBLEM_TITLES } from '../../client/api/problems.js';
import type * as Api from '../../client/api/schemas.js';
import { isOperation, isOperationList } from '../../client/lib/index.js';
import type * as Client from '../../client/lib/index.js';
import type { StepStatus } from '../../workflows/contracts.js';

type ApiOperation = Static<typeof Api.Operation>;

/**
 * Fields the contract adds to the resource that the client may know before the API in the
 * same tree declares them (the two sides are built in parallel). Once the API declares a
 * field it is compared exactly like every other one, with no change here.
 */
type AheadOfTheApi = 'cancelRequested' | 'keyExpiresAt' | 'notification';
/** The same for problem codes. */
type CodesAheadOfTheApi = 'operation_already_completed';

describe('the client types match the API schemas', () => {
  it('the operation resource: every field the API declares, with the same type and optionality', () => {
    expectTypeOf<Pick<Client.Operation, keyof ApiOperation>>().toEqualTypeOf<ApiOperation>();
    expectTypeOf<Exclude<keyof Client.Operation, keyof ApiOperation>>().toExtend<AheadOfTheApi>();
    expectTypeOf<Client.StepStatus>().toEqualTypeOf<StepStatus>();
  });

  it('the list, the request bodies and the list filter', () => {
    type ApiList = Static<typeof Api.OperationList>;
    expectTypeOf<Client.OperationList['nextCursor']>().toEqualTypeOf<ApiList['nextCursor']>();
    expectTypeOf<Pick<Client.OperationList['operations'][number], keyof ApiOperation>>().toEqualTypeOf<
      ApiList['operations'][number]
    >();
    expectTypeOf<Client.PaymentParams>().toEqualTypeOf<Static<typeof Api.PaymentBody>>();
    expectTypeOf<Client.CheckoutParams>().toEqualTypeOf<Static<typeof Api.CheckoutBody>>();
    // The query string carries `limit` as text; the client takes a number.
    expectTypeOf<Omit<Client.ListFilter, 'limit'>>().toEqualTypeOf<Omit<Static<typeof Api.ListQuery>, 'limit'>>();
  });

  it('problem details and every problem code the API can answer with', () => {
    expectTypeOf<Omit<Client.Problem, 'code'>>().toEqualTypeOf<Omit<Static<typeof Api.Problem>, 'code'>>();
    expectTypeOf<Exclude<keyof typeof PROBLEM_TITLES, Client.ProblemCode>>().toBeNever();
    expectTypeOf<Exclude<Client.ProblemCode, keyof typeof PROBLEM_TITLES>>().toExtend<CodesAheadOfTheApi>();
  });
});

// Every answer of the real API goes through the guard in the stack suites (client.test.ts,
// cli/commands.test.ts); these cases pin down what it refuses.
describe('the response guard', () => {
  const valid: Client.Operation = {
    key: 'k',
    type: 'checkout',
    status: 'processing',
    step: null,
    createdAt: '2030-01-01T00:00:00.000Z',
    completedAt: null,
    steps: [],
    needsAttention: false,
    links: { self: '/v1/operations/k', temporalUi: 'http://localhost:8233/x' },
    cancelRequested: true,
    keyExpiresAt: null,
    notification: { status: 'pending', attempts: 0 },
  };

  it('accepts the resource with the newest fields, and without them (an API a release older)', () => {
    expect(isOperation(valid)).toBe(true);
    const { cancelRequested: _c, keyExpiresAt: _k, notification: _n, ...older } = valid;
    expect(isOperation(older)).toBe(true);
    expect(isOperation({ ...valid, aFieldFromANewerApi: 1 })).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a status it does not know', { status: 'done' }],
    ['a type it does not know', { type: 'refund' }],
    ['a numeric key', { key: 42 }],
    ['steps that are not a list', { steps: {} }],
    ['a step with an unknown status', { steps: [{ name: 'x', status: 'later', downstreamKey: 'k' }] }],
    ['an error without compensations', { error: { code: 'x', message: 'y' } }],
    ['a result with a non-string value', { result: { chargeId: 1 } }],
    ['no links', { links: undefined }],
    ['a string cancelRequested', { cancelRequested: 'yes' }],
    ['a numeric keyExpiresAt', { keyExpiresAt: 0 }],
    ['a notification with an unknown status', { notification: { status: 'sent', attempts: 1 } }],
    ['a notification with fractional attempts', { notification: { status: 'failed', attempts: 1.5 } }],
  ])('refuses %s', (_name, change) => {
    expect(isOperation({ ...valid, ...change })).toBe(false);
  });

  it('refuses what is not a resource at all', () => {
    for (const v of [null, 'ok', [valid], { hello: 'proxy page' }]) expect(isOperation(v)).toBe(false);
    expect(isOperationList({ operations: [{ ...valid, status: 'done' }], nextCursor: null })).toBe(false);
    expect(isOperationList({ operations: [], nextCursor: 3 })).toBe(false);
  });
});
