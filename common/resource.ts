// Maps a workflow execution to the operation resource, the one shape of every answer about
// an operation. The memo holds what the API wrote at start (StartMemo) and the progress the
// workflow keeps current (ProgressMemo), so a status read needs no worker; the outcome comes
// from the return value, which also carries the facts of the operation (type, key, start
// time, last step, attention flag), so that with the close time it makes the whole answer.
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import {
  OPERATION_STATUSES,
  SearchAttributes,
  type OperationOutcome,
  type OperationStatus,
  type OutcomeFacts,
  type OperationType,
  type StepState,
} from '../workflows/contracts.js';
import { parseWorkflowId } from '../workflows/identity.js';
import type { Operation } from './resource-schema.js';
import { recordedTraceId } from './tracing/traceparent.js';

export interface ExecutionView {
  workflowId: string;
  status: { name: WorkflowExecutionStatusName };
  startTime: Date;
  closeTime?: Date;
  memo?: Record<string, unknown>;
  typedSearchAttributes?: TypedSearchAttributes;
  /** What DescribeWorkflowExecution adds (a visibility row has none): whether a cancel was requested. */
  raw?: { workflowExtendedInfo?: { cancelRequested?: boolean | null } | null };
  /**
   * Why the engine cannot make progress with it, when it cannot: its workflow tasks keep
   * failing (a non-determinism error, an activity the worker lacks). The workflow cannot say
   * so itself, since none of its code completes; the reader found it in the engine's state.
   */
  stuck?: string;
}

export interface ResourceContext {
  /**
   * Base of `links.temporalUi`. Undefined where the operator keeps the Web UI, a console
   * over every tenant's operations, out of tenants' answers: the resource has no such link.
   */
  temporalUiUrl?: string;
  namespace: string;
  /** The namespace retention, for `keyExpiresAt`; needed only for a finished operation. */
  retentionMs?: number;
}

export const ABORTED_CODE = 'operation_aborted';

export function operationPath(key: string): string {
  return `/v1/operations/${encodeURIComponent(key)}`;
}

export function temporalUiLink(ctx: ResourceContext & { temporalUiUrl: string }, workflowId: string): string {
  return `${ctx.temporalUiUrl}/namespaces/${ctx.namespace}/workflows/${encodeURIComponent(workflowId)}`;
}

function linksOf(ctx: ResourceContext, key: string, workflowId: string): Operation['links'] {
  const self = operationPath(key);
  return ctx.temporalUiUrl
    ? { self, temporalUi: temporalUiLink({ ...ctx, temporalUiUrl: ctx.temporalUiUrl }, workflowId) }
    : { self };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isOperationOutcome(value: unknown): value is OperationOutcome {
  if (!isRecord(value) || !Array.isArray(value.steps)) return false;
  if (value.status === 'succeeded') return isRecord(value.result);
  if (value.status === 'failed') {
    const e = value.error;
    return isRecord(e) && typeof e.code === 'string' && typeof e.message === 'string' && Array.isArray(e.compensations);
  }
  return false;
}

/**
 * Whether the outcome carries its facts: outcomes of workflows from before they did (an
 * operation still running across an upgrade) need the execution's description as well.
 */
export function hasOutcomeFacts(outcome: OperationOutcome): outcome is OperationOutcome & OutcomeFacts {
  const o = outcome as Partial<OutcomeFacts>;
  return (
    isOperationType(o.type) &&
    typeof o.key === 'string' &&
    typeof o.createdAt === 'string' &&
    !Number.isNaN(Date.parse(o.createdAt)) &&
    (o.step === null || typeof o.step === 'string') &&
    typeof o.needsAttention === 'boolean'
  );
}

/**
 * The operation from a completed workflow's return value and close time alone, or
 * undefined when the value does not carry its facts. Built through toOperation, so it is
 * the same resource a later read of the execution gives.
 */
export function operationFromOutcome(
  workflowId: string,
  value: unknown,
  closedAt: Date,
  ctx: ResourceContext,
  /** The operation's trace, as the start memo keeps it (the outcome does not carry it). */
  trace?: { traceparent: string },
): Operation | undefined {
  if (!isOperationOutcome(value) || !hasOutcomeFacts(value)) return undefined;
  const view: ExecutionView = {
    workflowId,
    status: { name: 'COMPLETED' },
    startTime: new Date(value.createdAt),
    closeTime: closedAt,
    memo: {
      type: value.type,
      key: value.key,
      ...(value.notify ? { notify: true } : {}),
      ...(value.version ? { definition: { version: value.version } } : {}),
      ...(trace ? { trace } : {}),
    },
  };
  return toOperation(view, value, ctx);
}

/** Any type the workflow recorded: a reader need not know every operation a worker runs. */
function isOperationType(v: unknown): v is OperationType {
  return typeof v === 'string' && v !== '';
}

function isOperationStatus(v: unknown): v is OperationStatus {
  return typeof v === 'string' && (OPERATION_STATUSES as readonly string[]).includes(v);
}

function stepsFrom(value: unknown): StepState[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (s): s is StepState =>
      isRecord(s) && typeof s.name === 'string' && typeof s.status === 'string' && typeof s.downstreamKey === 'string',
  );
}

function stringResult(result: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(result).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/** The client's key: from the memo, else the workflow ID without its `<tenant>/` prefix. */
export function keyOf(exec: ExecutionView): string {
  const fromMemo = exec.memo?.key;
  if (typeof fromMemo === 'string') return fromMemo;
  return parseWorkflowId(exec.workflowId)?.key ?? exec.workflowId;
}

/**
 * Builds the resource. `outcome` is the workflow's return value when it COMPLETED and it
 * was fetched; without it (list answers), a closed execution takes its status from the
 * OperationStatus search attribute the workflow sets as it finishes.
 */
export function toOperation(exec: ExecutionView, outcome: unknown, ctx: ResourceContext): Operation {
  const memo = exec.memo ?? {};
  const sa = exec.typedSearchAttributes;
  const key = keyOf(exec);
  const saType = sa?.get(SearchAttributes.OperationType);
  // An execution this API did not start (no memo, no attribute) names no type of its own.
  const type: OperationType = isOperationType(memo.type) ? memo.type : isOperationType(saType) ? saType : 'unknown';
  const flagged =
    typeof memo.needsAttention === 'boolean' ? memo.needsAttention : (sa?.get(SearchAttributes.NeedsAttention) ?? false);
  const needsAttention = flagged || exec.stuck !== undefined;
  const attentionReason = exec.stuck ?? (typeof memo.attentionReason === 'string' ? memo.attentionReason : undefined);
  const version = definitionVersionOf(memo, outcome, sa);

  const closedAt = exec.closeTime;
  const cancelRequested =
    exec.raw?.workflowExtendedInfo?.cancelRequested === true || (isRecord(outcome) && outcome.cancelRequested === true);
  const traceId = recordedTraceId(memo.trace);

  const base: Operation = {
    key,
    type,
    status: 'processing',
    step: typeof memo.step === 'string' ? memo.step : null,
    createdAt: exec.startTime.toISOString(),
    completedAt: closedAt ? closedAt.toISOString() : null,
    keyExpiresAt: closedAt && ctx.retentionMs !== undefined ? new Date(closedAt.getTime() + ctx.retentionMs).toISOString() : null,
    steps: stepsFrom(memo.steps),
    needsAttention,
    ...(needsAttention && attentionReason !== undefined ? { attentionReason } : {}),
    ...(version !== undefined ? { definition: { version } } : {}),
    cancelRequested,
    // An operation with a completion webhook says so from the start; the service reads how
    // the delivery went once the operation ended.
    ...(memo.notify === true ? { notification: { status: 'pending' as const, attempts: 0 } } : {}),
    // The operation's trace in the trace viewer, when it was recorded.
    ...(traceId ? { traceId } : {}),
    links: linksOf(ctx, key, exec.workflowId),
  };

  const temporalStatus = exec.status.name;
  if (temporalStatus === 'RUNNING' || temporalStatus === 'PAUSED') return { ...base, completedAt: null, keyExpiresAt: null };

  if (temporalStatus === 'COMPLETED') {
    if (outcome !== undefined) {
      if (!isOperationOutcome(outcome)) {
        return aborted(base, 'the operation returned no valid outcome');
      }
      const steps = stepsFrom(outcome.steps);
      // The workflow's last word on where it ended; the memo says the same when it was written.
      const facts = outcome as Partial<OutcomeFacts>;
      const ended = {
        ...base,
        steps,
        ...(facts.step === null || typeof facts.step === 'string' ? { step: facts.step } : {}),
        ...(typeof facts.needsAttention === 'boolean' ? { needsAttention: facts.needsAttention } : {}),
        ...(typeof facts.attentionReason === 'string' ? { attentionReason: facts.attentionReason } : {}),
      };
      if (outcome.status === 'succeeded') {
        return { ...ended, status: 'succeeded', result: stringResult(outcome.result) };
      }
      return {
        ...ended,
        status: 'failed',
        error: { code: outcome.error.code, message: outcome.error.message, compensations: [...outcome.error.compensations] },
      };
    }
    const saStatus = sa?.get(SearchAttributes.OperationStatus);
    return { ...base, status: isOperationStatus(saStatus) && saStatus !== 'processing' ? saStatus : 'processing' };
  }

  return aborted(base, `the operation ended without an outcome (Temporal status ${temporalStatus})`);
}

/** The definition's version: the start memo's, the outcome's, or the search attribute's (a list row). */
function definitionVersionOf(
  memo: Record<string, unknown>,
  outcome: unknown,
  sa: TypedSearchAttributes | undefined,
): string | undefined {
  const fromMemo = isRecord(memo.definition) ? memo.definition.version : undefined;
  if (typeof fromMemo === 'string' && fromMemo !== '') return fromMemo;
  const fromOutcome = isRecord(outcome) ? outcome.version : undefined;
  if (typeof fromOutcome === 'string' && fromOutcome !== '') return fromOutcome;
  const fromAttribute = sa?.get(SearchAttributes.DefinitionVersion);
  return typeof fromAttribute === 'string' && fromAttribute !== '' ? fromAttribute : undefined;
}

function aborted(base: Operation, message: string): Operation {
  return { ...base, status: 'failed', error: { code: ABORTED_CODE, message, compensations: [] } };
}

export const isTerminal = (op: Operation) => op.status !== 'processing';
