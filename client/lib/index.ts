// retrysafe/client: the TypeScript client of the retrysafe API.
//
//   import { createClient, OperationPendingError } from 'retrysafe/client';
//   const rs = createClient({ baseUrl: 'http://localhost:3000', apiKey });
//   const payment = await rs.payments.create({ account: 'acc_alice', amount: 1250, currency: 'EUR' });
//   payment.result?.chargeId; payment.meta.key;  // the key to retry or look it up with
export { createClient, operationPath, RetrySafe } from './client.js';
export { DEFAULT_BASE_URL } from './constants.js';
export type { CallOptions, ClientOptions, Hooks, ReadOptions, RetryEvent, WaitOptions } from './client.js';
export {
  ApiError,
  IdempotencyConflictError,
  OperationFailedError,
  OperationPendingError,
  RetrySafeError,
  type ProblemDetails,
} from './errors.js';
export { backoffDelay, DEFAULT_RETRY, parseRetryAfter, RETRYABLE_STATUSES, retryDelay, type RetryPolicy } from './retry.js';
export type {
  CallMeta,
  CheckoutParams,
  FailedOperation,
  ListFilter,
  Operation,
  OperationList,
  OperationResult,
  OperationStatus,
  OperationType,
  PaymentParams,
  Problem,
  SucceededOperation,
} from './types.js';
