// The definitions the open operations of a task queue run, as the visibility store knows
// them: each operation's memo records its definition's version and what running it needs
// (services, activities), and a search attribute holds the version. One query per version
// finds the next version not yet seen, so the look-up is bounded by the number of versions
// still in flight, not by the number of operations. Used by a worker about to start (it
// refuses to run when an open operation needs what it lacks) and by check-definitions.
import type { Client } from '@temporalio/client';
import { SearchAttributes, type DefinitionMemo } from '../workflows/contracts.js';
import type { ProgramNeeds } from '../workflows/program.js';
import type { DeploymentVersion } from './versioning.js';

/** Versions looked up at most: a queue with more in flight is reported as such, not scanned forever. */
export const MAX_VERSIONS = 50;

export interface OpenVersion {
  type: string;
  version: string;
  needs: ProgramNeeds;
  /** Open operations on this version. */
  count: number;
  /** One of them, to name in a message. */
  example: string;
}

export interface OpenOperations {
  versions: OpenVersion[];
  /** Open operations started before operations recorded their definition, by type: they run their type's definition here. */
  legacy: Map<string, number>;
  /** True when more than MAX_VERSIONS versions are open (the rest were not read). */
  truncated: boolean;
}

const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

function definitionMemo(memo: Record<string, unknown> | undefined): DefinitionMemo | undefined {
  const definition = memo?.definition as Partial<DefinitionMemo> | undefined;
  if (typeof definition?.version !== 'string') return undefined;
  return {
    version: definition.version,
    services: Array.isArray(definition.services) ? definition.services.map(String) : [],
    activities: Array.isArray(definition.activities) ? definition.activities.map(String) : [],
  };
}

/** Which open operations to read: of these types only; those a worker of this build may run only. */
export interface OpenScope {
  types?: readonly string[];
  deployment?: DeploymentVersion;
}

export async function openOperations(client: Client, taskQueue: string, scope: OpenScope = {}): Promise<OpenOperations> {
  const V = SearchAttributes.DefinitionVersion.name;
  const T = SearchAttributes.OperationType.name;
  const { types, deployment } = scope;
  // Pinned to another build, an operation never reaches this worker: its own build finishes it.
  const pinned = deployment
    ? ` AND (TemporalWorkerDeploymentVersion IS NULL OR TemporalWorkerDeploymentVersion = ${quote(`${deployment.deploymentName}:${deployment.buildId}`)})`
    : '';
  const open = `ExecutionStatus = "Running" AND TaskQueue = ${quote(taskQueue)}${
    types ? ` AND ${T} IN (${types.map(quote).join(', ')})` : ` AND ${T} IS NOT NULL`
  }${pinned}`;
  const versions: OpenVersion[] = [];
  let truncated = false;
  for (;;) {
    const seen = versions.map((v) => quote(v.version));
    const query = `${open} AND ${V} IS NOT NULL${seen.length > 0 ? ` AND ${V} NOT IN (${seen.join(', ')})` : ''}`;
    const row = await first(client, query);
    if (!row) break;
    if (versions.length === MAX_VERSIONS) {
      truncated = true;
      break;
    }
    const memo = definitionMemo(row.memo);
    const version = memo?.version ?? String(row.typedSearchAttributes.get(SearchAttributes.DefinitionVersion) ?? '');
    const { count } = await client.workflow.count(`${open} AND ${V} = ${quote(version)}`);
    versions.push({
      type: row.typedSearchAttributes.get(SearchAttributes.OperationType) ?? row.type,
      version,
      needs: { services: memo?.services ?? [], activities: memo?.activities ?? [] },
      count,
      example: row.workflowId,
    });
  }
  // Operations started before the memo held a definition are few and shrinking: a page of them says which types they are.
  const legacy = new Map<string, number>();
  let read = 0;
  for await (const row of client.workflow.list({ query: `${open} AND ${V} IS NULL`, pageSize: 1000 })) {
    const type = row.typedSearchAttributes.get(SearchAttributes.OperationType) ?? row.type;
    legacy.set(type, (legacy.get(type) ?? 0) + 1);
    if (++read === 1000) break;
  }
  return { versions, legacy, truncated };
}

async function first(client: Client, query: string) {
  for await (const row of client.workflow.list({ query, pageSize: 1 })) return row;
  return undefined;
}

/** What one version needs that `has` lacks, or nothing. */
export function lacking(needs: ProgramNeeds, has: ProgramNeeds): ProgramNeeds | undefined {
  const services = needs.services.filter((s) => !has.services.includes(s));
  const activities = needs.activities.filter((a) => !has.activities.includes(a));
  return services.length + activities.length > 0 ? { services, activities } : undefined;
}

/** One line per open version that `has` cannot run: which operations, and what they need. */
export function unrunnable(open: OpenOperations, has: ProgramNeeds, knownTypes: readonly string[]): string[] {
  const lines: string[] = [];
  for (const v of open.versions) {
    const missing = lacking(v.needs, has);
    if (!missing) continue;
    const what = [
      ...missing.services.map((s) => `service ${s} (no base URL in RETRYSAFE_SERVICES)`),
      ...missing.activities.map((a) => `activity ${a} (registered by no activities.ts of RETRYSAFE_OPERATIONS)`),
    ];
    lines.push(`${v.count} open ${v.type} operation(s) on definition ${v.version} (e.g. ${v.example}) need ${what.join(', ')}`);
  }
  for (const [type, count] of open.legacy) {
    if (!knownTypes.includes(type))
      lines.push(`${count} open ${type} operation(s) need the definition of ${type}, which this worker does not load`);
  }
  return lines;
}
