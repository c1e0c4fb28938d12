// The tenant's operations as Temporal's visibility store lists them, one page at a time.
// The SDK's `workflow.list()` iterator hides the page token an opaque cursor needs, so the
// page comes from the public workflow service, and its rows are decoded here with the
// client's own data converter (memo) and the JSON payload converter (search attributes),
// into the same view a describe() gives.
import type { Client, WorkflowExecutionStatusName } from '@temporalio/client';
import {
  SearchAttributeType,
  TypedSearchAttributes,
  defaultPayloadConverter,
  mapFromPayloads,
  type Payload,
  type SearchAttributePair,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import { SearchAttributes, type OperationStatus, type OperationType } from '../../../workflows/contracts.js';
import type { ExecutionView } from '../../../common/resource.js';
import type { EngineCall } from './deadline.js';
import { decodePayload, decodeTimestamp } from './decode.js';
import { reportedProblem } from './stuck.js';

export interface ListFilter {
  status?: OperationStatus;
  type?: OperationType;
  /** A definition version (`definition.version` of the resource): 16 lower-case hex characters. */
  version?: string;
}

/** Visibility filter per status. Running executions are `processing` whatever their search attributes say. */
const STATUS_QUERY: Record<OperationStatus, string> = {
  processing: `ExecutionStatus = 'Running'`,
  succeeded: `ExecutionStatus = 'Completed' AND OperationStatus = 'succeeded'`,
  failed:
    `(ExecutionStatus IN ('Failed', 'Terminated', 'Canceled', 'TimedOut') ` +
    `OR (ExecutionStatus = 'Completed' AND OperationStatus = 'failed'))`,
};

export function visibilityQuery(tenant: string, filter: ListFilter): string {
  // Tenants are [A-Za-z0-9_.-] and the other values come from enums (operation types are
  // [a-z0-9_], checked by the route against the catalog): nothing to escape.
  const clauses = [`Tenant = '${tenant}'`];
  if (filter.type) clauses.push(`OperationType = '${filter.type}'`);
  // A version is hex (checked by the route's schema): nothing to escape either.
  if (filter.version) clauses.push(`DefinitionVersion = '${filter.version}'`);
  if (filter.status) clauses.push(STATUS_QUERY[filter.status]);
  return clauses.join(' AND ');
}

export interface VisibleExecution extends ExecutionView {
  runId: string;
  /** The engine's report that its workflow tasks keep failing (TemporalReportedProblems), when it has one. */
  problem?: string;
}

export interface VisibilityPage {
  executions: VisibleExecution[];
  /** Empty on the last page. */
  nextPageToken: Buffer;
}

export async function listPage(
  client: Client,
  namespace: string,
  call: EngineCall,
  page: { query: string; pageSize: number; pageToken?: Buffer },
): Promise<VisibilityPage> {
  const response = await call(() =>
    client.workflowService.listWorkflowExecutions({
      namespace,
      query: page.query,
      pageSize: page.pageSize,
      nextPageToken: page.pageToken,
    }),
  );
  const executions: VisibleExecution[] = [];
  for (const raw of response.executions ?? []) executions.push(await decodeExecution(client, namespace, raw));
  return { executions, nextPageToken: Buffer.from(response.nextPageToken ?? []) };
}

// The proto package is CommonJS: its namespaces come through the default import under Node.
const S = proto.temporal.api.enums.v1.WorkflowExecutionStatus;
const STATUS_NAMES = new Map<number, WorkflowExecutionStatusName>([
  [S.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED, 'UNSPECIFIED'],
  [S.WORKFLOW_EXECUTION_STATUS_RUNNING, 'RUNNING'],
  [S.WORKFLOW_EXECUTION_STATUS_COMPLETED, 'COMPLETED'],
  [S.WORKFLOW_EXECUTION_STATUS_FAILED, 'FAILED'],
  [S.WORKFLOW_EXECUTION_STATUS_CANCELED, 'CANCELLED'],
  [S.WORKFLOW_EXECUTION_STATUS_TERMINATED, 'TERMINATED'],
  [S.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, 'CONTINUED_AS_NEW'],
  [S.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, 'TIMED_OUT'],
  [S.WORKFLOW_EXECUTION_STATUS_PAUSED, 'PAUSED'],
]);

/** The memo, decoded as the SDK decodes it. */
async function decodeMemo(
  client: Client,
  namespace: string,
  workflowId: string,
  fields: Record<string, Payload> | null | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (!fields) return undefined;
  const memo: Record<string, unknown> = {};
  for (const [name, payload] of Object.entries(fields)) memo[name] = await decodePayload(client, namespace, workflowId, payload);
  return memo;
}

/** The search attributes the resource reads, typed; a value of another type is left out. */
function decodeSearchAttributes(fields: Record<string, Payload> | null | undefined): TypedSearchAttributes {
  const values = mapFromPayloads<string, unknown>(defaultPayloadConverter, fields) ?? {};
  const pairs: SearchAttributePair[] = [];
  for (const key of Object.values(SearchAttributes)) {
    let value = values[key.name];
    // Servers before 1.18 send every attribute as a list.
    if (Array.isArray(value) && value.length === 1) value = value[0];
    if (key.type === SearchAttributeType.KEYWORD && typeof value === 'string') pairs.push({ key, value } as SearchAttributePair);
    if (key.type === SearchAttributeType.BOOL && typeof value === 'boolean') pairs.push({ key, value } as SearchAttributePair);
  }
  return new TypedSearchAttributes(pairs);
}

const withProblem = (problem: string | undefined) => (problem === undefined ? {} : { problem });

async function decodeExecution(
  client: Client,
  namespace: string,
  raw: proto.temporal.api.workflow.v1.IWorkflowExecutionInfo,
): Promise<VisibleExecution> {
  const workflowId = raw.execution?.workflowId ?? '';
  return {
    workflowId,
    runId: raw.execution?.runId ?? '',
    status: { name: STATUS_NAMES.get(raw.status ?? S.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED) ?? 'UNKNOWN' },
    startTime: decodeTimestamp(raw.startTime) ?? new Date(0),
    closeTime: decodeTimestamp(raw.closeTime),
    memo: await decodeMemo(client, namespace, workflowId, raw.memo?.fields as Record<string, Payload> | null | undefined),
    typedSearchAttributes: decodeSearchAttributes(
      raw.searchAttributes?.indexedFields as Record<string, Payload> | null | undefined,
    ),
    ...withProblem(reportedProblem(raw.searchAttributes?.indexedFields as Record<string, Payload> | null | undefined)),
  };
}
