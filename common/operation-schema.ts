// The operation resource's schema: the one shape of every answer about an operation,
// which the API serves and documents and the worker's completion events carry as their
// data. Shared by both, so neither imports the other.
import { Type, type Static } from 'typebox';
import { NOTIFICATION_STATUSES, OPERATION_STATUSES, STEP_STATUSES } from '../workflows/contracts.js';

const Step = Type.Object({
  name: Type.String({ examples: ['charge_payment'] }),
  status: Type.Enum([...STEP_STATUSES], { type: 'string' }),
  downstreamKey: Type.String({ examples: ['acme/order-42/charge'] }),
});

const OperationError = Type.Object({
  code: Type.String({ description: 'Stable code: insufficient_funds, payment_unavailable, cancelled, operation_aborted, ...' }),
  message: Type.String(),
  compensations: Type.Array(Type.String(), { description: 'Compensations that ran, in the order they ran' }),
});

/**
 * The operation resource, with the operation types this API knows (`types`, from its
 * registry) listed in the document. Its TypeScript type is the same for any registry.
 */
export function operationSchema(types: readonly string[] | undefined) {
  return Type.Object(
    {
      key: Type.String(),
      type: types ? Type.Enum([...types], { type: 'string' }) : Type.String(),
      status: Type.Enum([...OPERATION_STATUSES], { type: 'string' }),
      step: Type.Union([Type.String(), Type.Null()], { description: 'Current (or last) step; null before the first' }),
      createdAt: Type.String({ format: 'date-time' }),
      completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      keyExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description:
          'When the key will be forgotten (completedAt + the namespace retention); after it the key may start a new operation. Null while processing.',
      }),
      result: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Present when succeeded' })),
      error: Type.Optional(OperationError),
      steps: Type.Array(Step),
      needsAttention: Type.Boolean({ description: 'A compensation keeps failing; an operator should look' }),
      cancelRequested: Type.Boolean({
        description:
          'A cancel was requested: the operation stops at its next step boundary (the end of its last step included), undoes what it did, and fails with code cancelled',
      }),
      notification: Type.Optional(
        Type.Object(
          {
            status: Type.Enum([...NOTIFICATION_STATUSES], { type: 'string' }),
            attempts: Type.Integer({ minimum: 0, description: 'POSTs sent so far' }),
          },
          {
            description:
              'The completion webhook, present when the tenant has one: pending until it is delivered or its deadline passed',
          },
        ),
      ),
      traceId: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{32}$',
          description:
            "The operation's OpenTelemetry trace ID, present when tracing is on and the operation was recorded: look it up in the trace viewer",
        }),
      ),
      links: Type.Object({
        self: Type.String({ examples: ['/v1/operations/order-42'] }),
        temporalUi: Type.String({ description: 'The execution in the Temporal Web UI' }),
      }),
    },
    { description: 'The operation resource: every answer about an operation has this shape.' },
  );
}

export const Operation = operationSchema(undefined);
export type Operation = Static<typeof Operation>;
