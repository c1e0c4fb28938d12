// The shapes every part agrees on: workflow inputs and outcomes, memo and search attribute
// keys. Which operations, steps and compensations exist is the catalog's to say
// (catalog.ts); here they are strings. Imported by workflows (so it must stay
// deterministic: no Node built-ins, no I/O), activities, the worker and the API.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { OperationRef } from './identity.js';
import type { OperationProgram, ProgramNeeds } from './program.js';

/** An operation type the catalog defines: `payment`, `checkout`, `transfer`, ... */
export type OperationType = string;

export const OPERATION_STATUSES = ['processing', 'succeeded', 'failed'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

/** A step's name in its definition: `charge_payment`. */
export type StepName = string;
/** A compensation's name in its definition: `reverse_charge`. */
export type CompensationName = string;

/**
 * pending → running → completed | failed (business error) | fenced (outcome unknown at the
 * deadline, or never started because a cancel or an earlier fence stopped the saga). Once
 * its compensation ran, a step that had taken effect is compensated (undone); one whose
 * compensation found nothing to undo stays fenced (a tombstone refuses it for good).
 */
export const STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'fenced', 'compensated'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface StepState {
  name: StepName;
  status: StepStatus;
  downstreamKey: string;
}

/** Chosen by the API when it starts an operation; recorded in history, so replay-safe. */
export interface OperationSettings {
  /** Reconciliation deadline of each step (activity schedule-to-close). */
  stepDeadlineMs: number;
  /** A compensation still failing after this long marks the operation NeedsAttention. */
  attentionAfterMs: number;
  /**
   * How long the reservation service kept a checkout's hold, for checkouts started before
   * the hold time became the checkout definition's own setting (their programs' settings).
   */
  holdTtlSeconds?: number;
  /**
   * Only for a tenant with a completion webhook: how its event is delivered. Absent for
   * every other tenant, whose operations then run exactly as they would without the feature.
   */
  notify?: NotifySettings;
}

export interface NotifySettings {
  /** Redeliveries stop this long after the operation ended. */
  deadlineMs: number;
  /**
   * Base of `links.temporalUi` in the event, so it reads as the API renders the operation;
   * absent when the operator keeps Web UI links out of tenants' answers.
   */
  temporalUiUrl?: string;
}

/** W3C trace context of the operation's trace, carried as data so that no workflow code reads a header. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/**
 * The W3C trace context of an operation (the API's start span), carried as data so the
 * steps, compensations and webhook deliveries join the operation's trace without any
 * workflow interceptor: an optional field adds no command to a history. Absent when the
 * API traces nothing.
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export interface OperationInput<R> {
  tenant: string;
  key: string;
  request: R;
  settings: OperationSettings;
  /**
   * The definition the operation runs, recorded at its start. Absent only in operations
   * started before operations carried it (they run their type's definition as they always did).
   */
  program?: OperationProgram;
  /** The operation's trace, which every step's and compensation's target carries on. */
  trace?: TraceCarrier;
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
  /** The step or compensation making the call (`charge_payment`, `reverse_charge`), for logs; absent from older workflows. */
  step?: StepName | CompensationName;
  /** The operation's trace, which the call's span joins; absent when the operation is not traced. */
  trace?: TraceCarrier;
  /**
   * On an operation's first step only: everything its program needs from a worker. A worker
   * that lacks any of it refuses before making the call (ProgramRefused), so the operation
   * runs no step rather than some of them.
   */
  needs?: ProgramNeeds;
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
 * Code of an operation whose recorded program the worker refused before any step ran: a
 * malformed program, or one needing a service or activity the worker does not have.
 */
export const DEFINITION_REFUSED_CODE = 'definition_refused';

/** The failure type of that refusal, raised by the activity layer before any downstream call. */
export const PROGRAM_REFUSED = 'ProgramRefused';

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
  /** Why it needs attention, when it does. */
  attentionReason?: string;
  /** The version of the definition it ran; absent for operations started before they carried one. */
  version?: string;
  /** Set when the operation has a completion webhook, as the start memo says. */
  notify?: true;
  /** Set when a cancel was requested before the operation ended (then it failed, code `cancelled`). */
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
  /** The definition it runs: its version, and what a worker needs to run it (read by the worker's start check). */
  definition: DefinitionMemo;
  /** The operation's trace (its start span), which a retry of the key links to. */
  trace?: { traceparent: string };
}

export interface DefinitionMemo extends ProgramNeeds {
  version: string;
}

/** Memo fields the workflow keeps current, so status reads need no worker. */
export interface ProgressMemo {
  step: StepName | null;
  steps: StepState[];
  needsAttention?: boolean;
  attentionReason?: string;
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
  /** As NotifySettings.temporalUiUrl: absent, the event's resource has no Web UI link. */
  temporalUiUrl?: string;
  /** The operation's trace, which the deliveries join. */
  trace?: TraceCarrier;
}

/**
 * The event as it is POSTed: the body is made once, kept in history, and sent byte for byte
 * on every attempt; only the timestamp header and the signature over it are new each time.
 */
export interface CompletionEvent {
  body: string;
  /** The operation's trace, handed on from the notification's input to each delivery attempt. */
  trace?: TraceCarrier;
}

export const SearchAttributes = {
  OperationType: defineSearchAttributeKey('OperationType', SearchAttributeType.KEYWORD),
  OperationStatus: defineSearchAttributeKey('OperationStatus', SearchAttributeType.KEYWORD),
  OperationStep: defineSearchAttributeKey('OperationStep', SearchAttributeType.KEYWORD),
  Tenant: defineSearchAttributeKey('Tenant', SearchAttributeType.KEYWORD),
  NeedsAttention: defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL),
  DefinitionVersion: defineSearchAttributeKey('DefinitionVersion', SearchAttributeType.KEYWORD),
} as const;
