// The client's types come from the API's own TypeBox schemas, so a field added to or
// renamed in the API changes these types too, and the compiler points at every caller.
import type { Static } from 'typebox';
import type {
  CheckoutBody as CheckoutBodySchema,
  ListQuery as ListQuerySchema,
  Operation as OperationSchema,
  OperationList as OperationListSchema,
  PaymentBody as PaymentBodySchema,
  Problem as ProblemSchema,
} from '../api/schemas.js';

/** `POST /v1/payments` body: amount in minor units, ISO 4217 currency. */
export type PaymentParams = Static<typeof PaymentBodySchema>;
/** `POST /v1/checkouts` body. */
export type CheckoutParams = Static<typeof CheckoutBodySchema>;
/** The operation resource: every answer about an operation has this shape. */
export type Operation = Static<typeof OperationSchema>;
export type OperationStatus = Operation['status'];
export type OperationType = Operation['type'];
export type OperationList = Static<typeof OperationListSchema>;
/** RFC 9457 problem details as the API sends them. */
export type Problem = Static<typeof ProblemSchema>;

/** `GET /v1/operations` filter; `limit` is a number here (the query string carries text). */
export type ListFilter = Omit<Static<typeof ListQuerySchema>, 'limit'> & { limit?: number };

export type SucceededOperation = Operation & { status: 'succeeded' };
export type FailedOperation = Operation & { status: 'failed'; error: NonNullable<Operation['error']> };

/** How a logical call went: the key it used on every request, and what the API said. */
export interface CallMeta {
  /** The Idempotency-Key sent on every request of this call (given, or generated). */
  key: string;
  /** The API answered `Idempotent-Replayed: true`: this call did not start the operation. */
  replayed: boolean;
  /** HTTP requests made: POST attempts plus status polls. */
  requests: number;
}

/**
 * A succeeded operation. `meta` is not enumerable, so `JSON.stringify(result)` is exactly
 * the API's operation resource.
 */
export type OperationResult = SucceededOperation & { readonly meta: CallMeta };
