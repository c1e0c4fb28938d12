// An operation the engine cannot move: its workflow tasks keep failing (a non-determinism
// error after a change to workflow code, an activity or definition the worker lacks) or
// timing out. None of its own code completes, so it cannot say so in its memo; the engine
// can. Two signs, both read off what the API already fetched:
//
// - DescribeWorkflowExecution's pending workflow task: its attempt grows with each failure
//   (the first three retries are immediate, then backed off);
// - the TemporalReportedProblems search attribute, which the server sets after a few
//   consecutive failures (and clears on the next success), so list rows carry it too.
//
// The reason is the engine's own: the failure recorded by the first failed task, read from
// the end of the history only when one of those signs is there.
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type proto from '@temporalio/proto';
import type { EngineCall } from './deadline.js';

/** The server's search attribute of an execution that cannot make progress. */
const REPORTED_PROBLEMS = 'TemporalReportedProblems';

/** A pending workflow task on its third attempt or later has failed (or timed out) twice in a row. */
const STUCK_ATTEMPT = 3;

/** Longest reason quoted from the engine. */
const MAX_REASON = 400;

/** `WorkflowTaskFailedCauseNonDeterministicError` from the attribute's `cause=…`, or undefined when no problem is reported. */
export function reportedProblem(indexedFields: Record<string, Payload> | null | undefined): string | undefined {
  const payload = indexedFields?.[REPORTED_PROBLEMS];
  if (!payload) return undefined;
  const values = defaultPayloadConverter.fromPayload<unknown>(payload);
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const cause = values.find((v): v is string => typeof v === 'string' && v.startsWith('cause='));
  const category = values.find((v): v is string => typeof v === 'string' && v.startsWith('category='));
  return (cause ?? category ?? String(values[0])).replace(/^(cause|category)=/, '');
}

/** Whether a description says the execution's workflow tasks keep failing. */
export function looksStuck(raw: proto.temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse | undefined): boolean {
  if (!raw) return false;
  const problem = reportedProblem(
    raw.workflowExecutionInfo?.searchAttributes?.indexedFields as Record<string, Payload> | undefined,
  );
  return problem !== undefined || (raw.pendingWorkflowTask?.attempt ?? 0) >= STUCK_ATTEMPT;
}

/** Why: the failure the last failed workflow task recorded, and how many attempts it has had. */
export async function stuckReason(
  client: Client,
  namespace: string,
  call: EngineCall,
  raw: proto.temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse,
): Promise<string> {
  const execution = raw.workflowExecutionInfo?.execution ?? undefined;
  const attempt = raw.pendingWorkflowTask?.attempt ?? 0;
  const problem = reportedProblem(
    raw.workflowExecutionInfo?.searchAttributes?.indexedFields as Record<string, Payload> | undefined,
  );
  let failure: string | undefined;
  if (execution) {
    const page = await call(() =>
      client.workflowService.getWorkflowExecutionHistoryReverse({ namespace, execution, maximumPageSize: 50 }),
    ).catch(() => undefined);
    for (const event of page?.history?.events ?? []) {
      const failed = event.workflowTaskFailedEventAttributes;
      if (failed) {
        failure = failed.failure?.message ?? undefined;
        break;
      }
      if (event.workflowTaskTimedOutEventAttributes) {
        failure = 'the workflow task timed out';
        break;
      }
    }
  }
  const what = [problem, failure].filter(Boolean).join(': ') || 'no failure recorded';
  const reason = `its workflow tasks keep failing${attempt > 1 ? ` (attempt ${attempt})` : ''}: ${what}`;
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}

/** Open operations the engine reports as unable to make progress (visibility: TemporalReportedProblems). */
export const STUCK_QUERY = `ExecutionStatus = "Running" AND ${REPORTED_PROBLEMS} IN ("category=WorkflowTaskFailed", "category=WorkflowTaskTimedOut") AND OperationType IS NOT NULL`;
