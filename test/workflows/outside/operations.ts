// An operation defined outside the repository's source folders, as RETRYSAFE_OPERATIONS
// loads one: a declared call to the bank, no activity code.
import { Type } from 'typebox';
import type { OperationDefinition } from '../../../workflows/definition.js';

const PingRequest = Type.Object({ account: Type.String({ minLength: 1 }) }, { additionalProperties: false });

export const operations: OperationDefinition[] = [
  {
    type: 'ping',
    plural: 'pings',
    description: 'Moves one cent, to prove an operation from outside runs.',
    request: PingRequest,
    steps: [
      {
        name: 'ping_bank',
        keySuffix: 'ping',
        service: 'bank',
        call: {
          kind: 'http',
          method: 'POST',
          path: '/charges',
          body: { account: 'account', amount: { value: 1 }, currency: { value: 'EUR' } },
        },
        businessErrors: {},
      },
    ],
    unavailableCode: 'ping_unavailable',
  },
];
