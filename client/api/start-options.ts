// How the API starts an operation's workflow: the claim is the start itself. The workflow
// ID is the unique constraint (REJECT_DUPLICATE: one execution per key, ever, within the
// retention), and the fingerprint rides in the memo, written atomically with the
// execution. Pure, so the benchmarks start workflows exactly as the API does.
import type { WorkflowStartOptions } from '@temporalio/client';
import {
  SearchAttributes,
  type OperationInput,
  type OperationSettings,
  type OperationType,
  type StartMemo,
  type TraceCarrier,
} from '../../workflows/contracts.js';
import type { OperationDefinition } from '../../workflows/definition.js';
import type { OperationRef } from '../../workflows/identity.js';
import { programNeeds, type OperationProgram } from '../../workflows/program.js';
import { recordedTraceId } from '../../common/tracing/traceparent.js';
import { staticDetails, staticSummary } from './requests.js';

/** What a key is bound to: enough to tell a replay from a reuse without asking Temporal. */
export interface Claim {
  type: OperationType;
  fingerprint: string;
  request: Record<string, unknown>;
  /** The operation's trace, when it is traced: its input and memo carry it. */
  trace?: TraceCarrier;
}

/**
 * The start of `claim`'s operation; the workflow type is the operation type (one generic
 * workflow runs them all), and the input carries the program the operation runs: the
 * definition as it is now, whatever it becomes while the operation is in flight.
 */
export function workflowStartOptions(
  definition: OperationDefinition,
  program: OperationProgram,
  ref: OperationRef,
  claim: Claim,
  settings: OperationSettings,
  taskQueue: string,
): WorkflowStartOptions {
  const { trace } = claim;
  const input: OperationInput<Record<string, unknown>> = {
    tenant: ref.tenant,
    key: ref.key,
    request: claim.request,
    settings,
    program,
    ...(trace ? { trace } : {}),
  };
  const memo: StartMemo = {
    type: claim.type,
    tenant: ref.tenant,
    key: ref.key,
    fingerprint: claim.fingerprint,
    request: claim.request,
    // Readers learn from the memo, written with the start, that a notification workflow exists.
    ...(settings.notify ? { notify: true as const } : {}),
    // A worker about to start checks what the open operations' definitions need.
    definition: { version: program.version, ...programNeeds(program) },
    // A retry of the key links its own trace to this one.
    ...(trace ? { trace: { traceparent: trace.traceparent } } : {}),
  };
  return {
    taskQueue,
    workflowId: ref.workflowId,
    // The default, ALLOW_DUPLICATE, would start a second run once the first one closed.
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    // Each tenant gets its share of the task queues: its workflow and activity tasks inherit this key.
    priority: { fairnessKey: ref.tenant },
    args: [input],
    memo: { ...memo },
    staticSummary: staticSummary(definition, ref.workflowId, claim.request),
    staticDetails: withTraceId(staticDetails(definition, claim.request, program.version), trace),
    typedSearchAttributes: [
      { key: SearchAttributes.OperationType, value: claim.type },
      { key: SearchAttributes.OperationStatus, value: 'processing' },
      { key: SearchAttributes.Tenant, value: ref.tenant },
      { key: SearchAttributes.NeedsAttention, value: false },
      { key: SearchAttributes.DefinitionVersion, value: program.version },
    ],
  };
}

/** The Web UI's details end with the operation's trace ID when it is recorded, to look it up in the trace viewer. */
function withTraceId(details: string, trace: TraceCarrier | undefined): string {
  const traceId = recordedTraceId(trace);
  return traceId ? `${details}\n\ntrace \`${traceId}\`` : details;
}
