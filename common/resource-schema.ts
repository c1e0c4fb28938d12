// The operation resource's schema: the one shape of every answer about an operation,
// which the API serves and documents and the worker's completion events carry as their
// data. Shared by both, so neither imports the other.
//
// One list of fields (resourceSchema) makes both forms of it: the resource of any
// operation type, as it is serialised and typed (`Operation`), and the resource of one
// type, as the OpenAPI document describes each type's answers (`typedOperationSchema`):
// its `type` that one name and its `result` that type's own fields. A field added to the
// list is in both.
import { Type, type Static, type TObjectOptions, type TSchema } from 'typebox';
import { NOTIFICATION_STATUSES, OPERATION_STATUSES, STEP_STATUSES } from '../workflows/contracts.js';

const Step = Type.Object(
  {
    name: Type.String({ examples: ['charge_payment'] }),
    status: Type.Enum([...STEP_STATUSES], { type: 'string' }),
    downstreamKey: Type.String({ examples: ['acme/order-42/charge'] }),
  },
  { description: 'One step of the operation, and the key it uses at its downstream service' },
);

const OperationError = Type.Object(
  {
    code: Type.String({ description: 'Stable code: insufficient_funds, payment_unavailable, cancelled, operation_aborted, ...' }),
    message: Type.String(),
    compensations: Type.Array(Type.String(), { description: 'Compensations that ran, in the order they ran' }),
  },
  { description: 'Present when failed' },
);

const Notification = Type.Object(
  {
    status: Type.Enum([...NOTIFICATION_STATUSES], { type: 'string' }),
    attempts: Type.Integer({ minimum: 0, description: 'POSTs sent so far' }),
  },
  {
    description: 'The completion webhook, present when the tenant has one: pending until it is delivered or its deadline passed',
  },
);

const Links = Type.Object({
  self: Type.String({ examples: ['/v1/operations/order-42'] }),
  temporalUi: Type.Optional(
    Type.String({
      description:
        'The execution in the Temporal Web UI, an operator console: present only where the operator turned tenant links on (RETRYSAFE_UI_LINKS=on; on in dev mode)',
    }),
  ),
});

/**
 * The resource's nested objects, by the name the OpenAPI document gives each: a document
 * refers to them by that name from every type's resource, so a generated client has one
 * class per part, not one per operation type.
 */
export const RESOURCE_PARTS = {
  OperationStep: Step,
  OperationError,
  OperationNotification: Notification,
  OperationLinks: Links,
} as const;

/** The nested objects of one form of the resource: the schemas themselves, or references to them. */
export interface ResourceParts<
  S extends TSchema = TSchema,
  E extends TSchema = TSchema,
  N extends TSchema = TSchema,
  L extends TSchema = TSchema,
> {
  OperationStep: S;
  OperationError: E;
  OperationNotification: N;
  OperationLinks: L;
}

const RESOURCE_DESCRIPTION = 'The operation resource: every answer about an operation has this shape.';

/**
 * The resource's fields, the one list of them. `type` and `result` are what a type's own
 * resource narrows; `parts` are the nested objects, inline (RESOURCE_PARTS) or referenced.
 */
export function resourceSchema<
  T extends TSchema,
  R extends TSchema,
  S extends TSchema,
  E extends TSchema,
  N extends TSchema,
  L extends TSchema,
>(type: T, result: R, parts: ResourceParts<S, E, N, L>, options: TObjectOptions = {}) {
  return Type.Object(
    {
      key: Type.String(),
      type,
      status: Type.Enum([...OPERATION_STATUSES], { type: 'string' }),
      step: Type.Union([Type.String(), Type.Null()], { description: 'Current (or last) step; null before the first' }),
      createdAt: Type.String({ format: 'date-time' }),
      completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      keyExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description:
          'When the key will be forgotten (completedAt + the namespace retention); after it the key may start a new operation. Null while processing.',
      }),
      result: Type.Optional(result),
      error: Type.Optional(parts.OperationError),
      steps: Type.Array(parts.OperationStep),
      needsAttention: Type.Boolean({
        description:
          'An operator should look: a compensation keeps failing, the worker refused its definition, or its workflow tasks keep failing (attentionReason says which)',
      }),
      attentionReason: Type.Optional(Type.String({ description: 'Why it needs attention, when it does' })),
      definition: Type.Optional(
        Type.Object(
          {
            version: Type.String({
              description:
                'Digest of the definition the operation runs, recorded at its start: the same for every operation started on the same definition, another after a change',
              examples: ['3f9c2a1b7d4e6f80'],
            }),
          },
          {
            description:
              'The definition the operation started with and finishes on (absent for operations started before it was recorded)',
          },
        ),
      ),
      cancelRequested: Type.Boolean({
        description:
          'A cancel was requested: the operation stops at its next step boundary (the end of its last step included), undoes what it did, and fails with code cancelled',
      }),
      notification: Type.Optional(parts.OperationNotification),
      traceId: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{32}$',
          description:
            "The operation's OpenTelemetry trace ID, present when tracing is on and the operation was recorded: look it up in the trace viewer",
        }),
      ),
      links: parts.OperationLinks,
    },
    { description: RESOURCE_DESCRIPTION, ...options },
  );
}

/**
 * The resource of any operation type, as the API serialises it: every type's answers,
 * and a result field of any name (an operation that started on an earlier definition may
 * carry fields the current one no longer has).
 */
export const Operation = resourceSchema(
  Type.String(),
  Type.Record(Type.String(), Type.String(), { description: 'Present when succeeded' }),
  RESOURCE_PARTS,
);
export type Operation = Static<typeof Operation>;

/** A definition's result fields, as its steps' `result` maps name them, in step order. */
export function resultFields(definition: { steps: readonly { result?: Readonly<Record<string, string>> }[] }): string[] {
  return [...new Set(definition.steps.flatMap((step) => Object.keys(step.result ?? {})))];
}

/**
 * The resource of one operation type, for the OpenAPI document: `type` is its name and
 * `result` has its own fields (every one a string, each present once it succeeded).
 * `parts` refers to the nested objects as the document names them.
 */
export function typedOperationSchema(
  type: string,
  resultFields: readonly string[],
  parts: ResourceParts,
  options: TObjectOptions = {},
) {
  const result = Type.Object(Object.fromEntries(resultFields.map((field) => [field, Type.String()])), {
    description: 'Present when succeeded',
  });
  return resourceSchema(Type.Literal(type), result, parts, options);
}
