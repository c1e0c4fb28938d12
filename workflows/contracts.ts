// The shapes every part agrees on: workflow inputs and outcomes, step and compensation
// names, memo and search attribute keys. Imported by workflows (so it must stay
// deterministic: no Node built-ins, no I/O), activities, the worker and the API.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { OperationRef } from './identity.js';

export const OPERATION_TYPES = ['payment', 'checkout'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const OPERATION_STATUSES = ['processing', 'succeeded', 'failed'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export type StepName = 'reserve_items' | 'charge_payment' | 'confirm_reservation';
export type CompensationName = 'reverse_charge' | 'release_reservation';

/** The steps of each operation, in the order they run: the step list readers see from the start. */
export const OPERATION_STEPS = {
  payment: ['charge_payment'],
  checkout: ['reserve_items', 'charge_payment', 'confirm_reservation'],
} as const satisfies Record<OperationType, readonly StepName[]>;

/**
 * pending → running → completed | failed (business error) | fenced (outcome unknown at the
 * deadline); a completed step whose compensation ran becomes compensated.
 */
export const STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'fenced', 'compensated'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface StepState {
  name: StepName;
  status: StepStatus;
  downstreamKey: string;
}

export interface PaymentRequest {
  account: string;
  amount: number;
  currency: string;
  description?: string;
}

export interface CheckoutItem {
  sku: string;
  quantity: number;
}

export interface CheckoutRequest extends PaymentRequest {
  items: CheckoutItem[];
}

/** Chosen by the API when it starts an operation; recorded in history, so replay-safe. */
export interface OperationSettings {
  /** Reconciliation deadline of each step (activity schedule-to-close). */
  stepDeadlineMs: number;
  /** A compensation still failing after this long marks the operation NeedsAttention. */
  attentionAfterMs: number;
  /** How long the reservation service keeps a checkout's hold before it expires. */
  holdTtlSeconds: number;
  /**
   * Only for a tenant with a completion webhook: how its event is delivered. Absent for
   * every other tenant, whose operations then run exactly as they would without the feature.
   */
  notify?: NotifySettings;
}

export interface NotifySettings {
  /** Redeliveries stop this long after the operation ended. */
  deadlineMs: number;
  /** Base of `links.temporalUi` in the event, so it reads as the API renders the operation. */
  temporalUiUrl: string;
}

export interface OperationInput<R> {
  tenant: string;
  key: string;
  request: R;
  settings: OperationSettings;
}

/**
 * What a step or compensation activity is told about its downstream call, so it never
 * has to recover anything from the workflow ID.
 */
export interface DownstreamTarget {
  /** The operation the call belongs to: its tenant, key and workflow ID (for logs). */
  operation: OperationRef;
  /** The key the downstream deduplicates the call on (`<tenant>/<key>/charge`), the same on every retry. */
  downstreamKey: string;
}

export interface OperationError {
  /** Stable business code: insufficient_funds, payment_unavailable, out_of_stock, ... */
  code: string;
  message: string;
  /** Compensations that ran, in the order they ran. */
  compensations: CompensationName[];
}

/** Code of an operation that stopped at a step boundary because a cancel was requested. */
export const CANCELLED_CODE = 'cancelled';

/**
 * What every outcome carries besides its result: with the close time of the execution, all
 * the API needs to answer with the operation, without reading the execution again.
 */
export interface OutcomeFacts {
  type: OperationType;
  key: string;
  /** When the execution started (ISO 8601): the start time a description of it reports. */
  createdAt: string;
  /** The step the operation ended at. */
  step: StepName | null;
  steps: StepState[];
  needsAttention: boolean;
  /** Set when the operation has a completion webhook, as the start memo says. */
  notify?: true;
  /** Set when a cancel was requested before the operation ended (it may still have succeeded: the last step had run). */
  cancelRequested?: true;
}

export type OperationOutcome =
  | (OutcomeFacts & { status: 'succeeded'; result: Record<string, string> })
  | (OutcomeFacts & { status: 'failed'; error: OperationError });

/** Memo written by the API atomically with the start (the fingerprint binds the key). */
export interface StartMemo {
  type: OperationType;
  tenant: string;
  key: string;
  fingerprint: string;
  request: Record<string, unknown>;
  /** Set when the operation has a completion webhook (a notification workflow beside it). */
  notify?: true;
}

/** Memo fields the workflow keeps current, so status reads need no worker. */
export interface ProgressMemo {
  step: StepName | null;
  steps: StepState[];
  needsAttention?: boolean;
}

export const NOTIFICATION_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** Where a completion webhook stands: `attempts` counts the POSTs sent so far. */
export interface NotificationState {
  status: NotificationStatus;
  attempts: number;
}

/** Input of the notification workflow an operation of a webhook tenant starts beside itself. */
export interface NotificationInput {
  /** The operation the event is about (its workflow is this one's parent). */
  operation: OperationRef;
  deadlineMs: number;
  temporalUiUrl: string;
}

/**
 * The event as it is POSTed: the body is made once, kept in history, and sent byte for byte
 * on every attempt; only the timestamp header and the signature over it are new each time.
 */
export interface CompletionEvent {
  body: string;
}

export const SearchAttributes = {
  OperationType: defineSearchAttributeKey('OperationType', SearchAttributeType.KEYWORD),
  OperationStatus: defineSearchAttributeKey('OperationStatus', SearchAttributeType.KEYWORD),
  OperationStep: defineSearchAttributeKey('OperationStep', SearchAttributeType.KEYWORD),
  Tenant: defineSearchAttributeKey('Tenant', SearchAttributeType.KEYWORD),
  NeedsAttention: defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL),
} as const;

/**
 * Business failures: the failure `type` an activity raises (its error class name) and the
 * stable code the operation reports; the one map from one to the other. Listed in the
 * forward step's nonRetryableErrorTypes.
 */
export const BUSINESS_ERRORS = {
  InsufficientFundsError: 'insufficient_funds',
  AccountNotFoundError: 'account_not_found',
  CurrencyMismatchError: 'currency_mismatch',
  OutOfStockError: 'out_of_stock',
  UnknownSkuError: 'unknown_sku',
  ReservationExpiredError: 'reservation_expired',
} as const;
export type BusinessErrorType = keyof typeof BUSINESS_ERRORS;

/** Failures that are not business outcomes but must not be retried either (e.g. a fenced key). */
export const TERMINAL_ERRORS = ['ChargeFencedError', 'ReservationFencedError', 'DownstreamConflictError'] as const;

/** Code of an operation whose step outcome could not be reconciled by its deadline. */
export const UNAVAILABLE_CODE: Record<StepName, string> = {
  reserve_items: 'inventory_unavailable',
  charge_payment: 'payment_unavailable',
  confirm_reservation: 'inventory_unavailable',
};
