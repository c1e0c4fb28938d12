// The client package's types are written out so that its declarations need nothing from
// the server; here the compiler holds them to the API's own schemas. These are type-level
// checks: `npx tsc --noEmit` (part of `npm test`) fails when a schema and a client type
// drift apart. The runtime half pins down the guard that stands in for the schemas when
// an answer arrives.
import type { Static } from 'typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PROBLEM_TITLES } from '../../client/api/problems.js';
import type * as Api from '../../client/api/schemas.js';
import { isOperation, isOperationList, OPERATIONS } from '../../client/lib/index.js';
import { resultFields } from '../../common/resource-schema.js';
import { builtInCatalog as catalog } from '../../workflows/catalog.js';
import type * as Client from '../../client/lib/index.js';
import type { StepStatus } from '../../workflows/contracts.js';
import type { CheckoutRequest } from '../../workflows/definitions/checkout.js';
import type { PaymentRequest } from '../../workflows/definitions/payment.js';
import type { TransferRequest } from '../../workflows/definitions/transfer.js';

type ApiOperation = Static<typeof Api.Operation>;

describe('the client types match the API schemas', () => {
  it('the operation resource: every field the API declares, with the same type and optionality', () => {
    // `type` is any string to both; the client's names the built-in types for completion.
    expectTypeOf<Omit<Pick<Client.Operation, keyof ApiOperation>, 'type'>>().toEqualTypeOf<Omit<ApiOperation, 'type'>>();
    expectTypeOf<ApiOperation['type']>().toExtend<Client.OperationType>();
    expectTypeOf<Client.OperationType>().toExtend<ApiOperation['type']>();
    expectTypeOf<Exclude<keyof Client.Operation, keyof ApiOperation>>().toBeNever();
    expectTypeOf<Client.StepStatus>().toEqualTypeOf<StepStatus>();
  });

  it('the list, the request bodies and the list filter', () => {
    type ApiList = Static<typeof Api.OperationList>;
    expectTypeOf<Client.OperationList['nextCursor']>().toEqualTypeOf<ApiList['nextCursor']>();
    expectTypeOf<Omit<Pick<Client.OperationList['operations'][number], keyof ApiOperation>, 'type'>>().toEqualTypeOf<
      Omit<ApiList['operations'][number], 'type'>
    >();
    // The generated request types are what TypeBox makes of each definition's schema.
    expectTypeOf<Client.PaymentParams>().toEqualTypeOf<Static<typeof PaymentRequest>>();
    expectTypeOf<Client.CheckoutParams>().toEqualTypeOf<Static<typeof CheckoutRequest>>();
    expectTypeOf<Client.TransferParams>().toEqualTypeOf<Static<typeof TransferRequest>>();
    // The query string carries `limit` as text; the client takes a number; `type` is any
    // type the API knows (the API checks it against its catalog).
    expectTypeOf<Omit<Client.ListFilter, 'limit' | 'type'>>().toEqualTypeOf<
      Omit<Static<ReturnType<typeof Api.listQuery>>, 'limit' | 'type'>
    >();
  });

  it("a succeeded built-in operation: its type and its own result fields, as the API's document names them", () => {
    expectTypeOf<Client.OperationResult<'payment'>['type']>().toEqualTypeOf<'payment'>();
    expectTypeOf<Client.OperationResult<'payment'>['result']['chargeId']>().toEqualTypeOf<string>();
    expectTypeOf<Client.OperationResults>().toEqualTypeOf<{
      payment: { chargeId: string };
      checkout: { reservationId: string; chargeId: string };
      transfer: { debitId: string; creditId: string };
    }>();
    // Of a type the client was not built with: any result field.
    expectTypeOf<Client.OperationResult['result']>().toEqualTypeOf<Record<string, string> | undefined>();
    expect(Object.keys(OPERATIONS).map((type) => [type, resultFields(catalog.get(type)!)])).toEqual([
      ['payment', ['chargeId']],
      ['checkout', ['reservationId', 'chargeId']],
      ['transfer', ['debitId', 'creditId']],
    ]);
  });

  it('problem details and every problem code the API can answer with', () => {
    expectTypeOf<Omit<Client.Problem, 'code'>>().toEqualTypeOf<Omit<Static<typeof Api.Problem>, 'code'>>();
    expectTypeOf<Exclude<keyof typeof PROBLEM_TITLES, Client.ProblemCode>>().toBeNever();
    expectTypeOf<Exclude<Client.ProblemCode, keyof typeof PROBLEM_TITLES>>().toBeNever();
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
    ['a type that is not a name', { type: 42 }],
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
