// retrysafe/client: the TypeScript client of the retrysafe API.
//
//   import { createClient, OperationPendingError } from 'retrysafe/client';
//   const rs = createClient({ baseUrl: 'http://localhost:3000', apiKey });
//   const payment = await rs.payments.create({ account: 'acc_alice', amount: 1250, currency: 'EUR' });
//   payment.result.chargeId; payment.meta.key;  // the key to retry or look it up with
//   await rs.start('transfer', { from: 'acc_alice', to: 'acc_bob', amount: 500, currency: 'EUR' });
export { createClient, operationPath, RetrySafe, type OperationCollections } from './client.js';
export { BUILT_IN_OPERATIONS, operationsOf, type OperationDescription } from './discovery.js';
export {
  OPERATIONS,
  type CheckoutParams,
  type OperationRequests,
  type OperationResults,
  type PaymentParams,
  type TransferParams,
} from './operations.js';
export { schemaProblem, type JsonSchema, type SchemaProblem } from './schema-check.js';
export { DEFAULT_BASE_URL } from './constants.js';
export type { CallOptions, ClientOptions, Hooks, ReadOptions, RetryEvent, WaitOptions } from './options.js';
export {
  ApiError,
  IdempotencyConflictError,
  OperationAlreadyCompletedError,
  OperationFailedError,
  OperationPendingError,
  RetrySafeError,
  type ApiErrorCode,
  type ClientErrorCode,
  type ProblemDetails,
} from './errors.js';
export { isValidKey, MAX_KEY_LENGTH } from './keys.js';
export { isOperation, isOperationList } from './resource.js';
export { backoffDelay, DEFAULT_RETRY, parseRetryAfter, RETRYABLE_STATUSES, retryDelay, type RetryPolicy } from './retry.js';
export type {
  CallMeta,
  FailedOperation,
  ListFilter,
  NotificationStatus,
  Operation,
  OperationError,
  OperationList,
  OperationNotification,
  OperationResult,
  OperationStatus,
  OperationStep,
  OperationType,
  Problem,
  ProblemCode,
  StepStatus,
  SucceededOperation,
  WebhookEvent,
} from './types.js';
