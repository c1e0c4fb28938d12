// The one summary of a chaos run: a table for people, the same numbers as JSON (--report).
import Table from 'cli-table3';
import type { AuditResult, WebhookTally } from './auditor.js';
import { PROCESS_FAULT_RATES, type ProcessFaultKind, type Topology } from './fault-schedule.js';
import type { LogCounts } from './log-taps.js';
import type { ClientStats, Violation } from './records.js';

/** What the fault drivers fired: the sandbox windows by kind, and the process faults. */
export function newFaultTally() {
  return {
    ...{ dropWindows: 0, failWindows: 0, delayWindows: 0, downWindows: 0, crashWindows: 0 },
    /** Process faults that fired (crashes and restarts), by kind. */
    processes: {} as Partial<Record<ProcessFaultKind, number>>,
    /** For each SIGKILL of a kind: the POST requests the process had in flight (from its request events). */
    inFlightAtKill: {} as Partial<Record<ProcessFaultKind, number[]>>,
    /** For each fault of a kind: how long the part was down (killed or stopped until up again). */
    downMs: {} as Partial<Record<ProcessFaultKind, number[]>>,
    /** /readyz answers while Temporal was stopped, by status. */
    readyzWhileTemporalDown: {} as Record<string, number>,
  };
}

export type FaultTally = ReturnType<typeof newFaultTally>;

/** How each process fault reads in the table. */
const PROCESS_FAULT_LABELS: Record<ProcessFaultKind, string> = {
  worker_kill: 'worker SIGKILL (+ restart)',
  api_kill: 'API SIGKILL mid-request',
  api_restart: 'API restart (SIGTERM + start)',
  bank_kill: 'bank SIGKILL mid-request',
  reservations_kill: 'reservations SIGKILL mid-request',
  temporal_kill: 'Temporal dev server SIGKILL',
  temporal_restart: 'Temporal restart (same db file)',
  history_kill: 'history process SIGKILL',
  frontend_kill: 'frontend SIGKILL',
  postgres_restart: 'PostgreSQL restart',
};

/** The flood window: what the flooding tenant's requests were answered. */
export interface FloodReport {
  tenant: string;
  /** When its first requests went out, from the start of the load. */
  atMs: number;
  ops: number;
  /** Operations some request of which got a 200 or 202. */
  accepted: number;
  /** Its requests (first tries and retries), by status. */
  requests: number;
  byStatus: Record<string, number>;
  /** Its 503 answers by code (engine_busy: the instance's bound, or its share of it). */
  unavailableByCode: Record<string, number>;
  /** From its first request until the last of its operations was accepted. */
  allAcceptedAfterMs?: number;
}

export interface ChaosReport {
  passed: boolean;
  topology: Topology;
  seed: number;
  durationMs: number;
  settleMs: number;
  scheduleHash: string;
  replay: string;
  timings: { stackStartMs: number; loadMs: number; settleMs: number; auditMs: number; totalMs: number };
  /** Planned operations: all of them, by type (every type of the catalog), of the flood, and by profile. */
  operations: { total: number; byType: Record<string, number>; flood: number; designedToFail: number; mayFail: number };
  http: ClientStats;
  flood: FloodReport;
  faults: FaultTally & {
    droppedResponses: number;
    droppedResponsesByService: LogCounts['droppedResponses'];
    crashedAfterCommit: number;
    crashedAfterCommitByService: LogCounts['crashedAfterCommit'];
    failedBeforeCommit: number;
    refusedWhileDown: number;
    /** Requests a sandbox held by an injected delay. */
    delayed: number;
    /** The workers' downstream calls that failed, by result (unavailable: retried; refused: final). */
    downstreamCallsFailed: Record<string, number>;
    unexpectedExits: Record<string, number>;
  };
  outcomes: AuditResult['outcomes'];
  /** The completion webhooks of the run's tenant, as its receiver saw them. */
  webhooks?: WebhookTally & { receiverDownWindows: number };
  auditReads: number;
  conservation: AuditResult['conservation'];
  violations: Violation[];
  violationKeys: string[];
  /** Worth a look, but not a broken invariant (e.g. a 503 that is not a problem document). */
  findings: string[];
  dataDir?: string;
}

/** Observations that break no invariant but deviate from the contract or the plan. */
export function findingsOf(http: ClientStats, unexpectedExits: Record<string, number>): string[] {
  const findings: string[] = [];
  for (const [code, n] of Object.entries(http.unavailableByCode)) {
    // The engine down, and the engine bound under the flood: both expected in a chaos run.
    if (code === 'engine_unavailable' || code === 'engine_busy') continue;
    const sample = http.unavailableSamples[code];
    findings.push(
      `${n} answers 503 with code ${code} (not engine_unavailable), e.g. content-type ${String(sample?.contentType)}, ` +
        `Retry-After ${String(sample?.retryAfter)}, body ${String(sample?.body)}`,
    );
  }
  if (http.requestTimeouts > 0)
    findings.push(
      `${http.requestTimeouts} answers 408 request_timeout: an API instance did not receive the request in time ` +
        '(a starved machine); each was retried with the same key',
    );
  for (const [name, n] of Object.entries(unexpectedExits))
    findings.push(`${name} exited on its own ${n} time(s) and was restarted`);
  return findings;
}

const count = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ') || '-';
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function renderTable(r: ChaosReport): string {
  const t = new Table({
    head: [
      'chaos run',
      `seed ${r.seed}, ${seconds(r.durationMs)} of faults, ${r.topology === 'cluster' ? 'Temporal cluster on PostgreSQL' : 'embedded Temporal dev server'}`,
    ],
    wordWrap: true,
    colWidths: [34, 72],
  });
  const section = (name: string) => t.push([{ colSpan: 2, content: `— ${name}` }]);
  clientRows(r, t, section);
  faultRows(r, t, section);
  outcomeRows(r, t, section);
  return t.toString();
}

type Rows = InstanceType<typeof Table>;

function clientRows(r: ChaosReport, t: Rows, section: (name: string) => void): void {
  section('plan');
  t.push(['schedule hash', r.scheduleHash.slice(0, 16)]);
  t.push([
    'logical operations',
    `${r.operations.total} (${Object.entries(r.operations.byType)
      .map(([type, n]) => `${type} ${n}`)
      .join(
        ', ',
      )}; ${r.operations.flood} of them in the flood; designed to fail ${r.operations.designedToFail}, may fail ${r.operations.mayFail})`,
  ]);
  section('clients');
  t.push(['HTTP requests', String(r.http.requests)]);
  t.push(['  by status', fmt(r.http.byStatus)]);
  for (const [tenant, { requests, byStatus }] of Object.entries(r.http.byTenant).sort(([a], [b]) => a.localeCompare(b)))
    t.push([`  tenant ${tenant}`, `${requests}: ${fmt(byStatus)}`]);
  t.push(['  by API instance', `api-0: ${r.http.byApi[0]}, api-1: ${r.http.byApi[1]}`]);
  t.push(['client retries (same key)', String(r.http.retries)]);
  t.push(['concurrent extra clients', String(r.http.concurrentClients)]);
  t.push(['late retries after the outcome', `${r.http.lateReplays} (Idempotent-Replayed: true on ${r.http.replayHeader.true})`]);
  t.push(['changed amount, same key', `${r.http.changedAmountSent} sent, ${r.http.got422} got 422`]);
  t.push(['503 answers by code', fmt(r.http.unavailableByCode)]);
  // The others' engine_busy says what the flood cost them: the bound leaves them a quarter of its places.
  for (const [tenant, byCode] of Object.entries(r.http.unavailableByTenant).sort(([a], [b]) => a.localeCompare(b)))
    t.push([`  tenant ${tenant}`, fmt(byCode)]);
  t.push(['cancels, by the step they landed on', fmt(r.http.cancelsByStep)]);
  section(`flood of tenant ${r.flood.tenant}`);
  t.push([
    'new operations at once',
    `${r.flood.ops} from ${seconds(r.flood.atMs)}; ${r.flood.accepted} accepted` +
      (r.flood.allAcceptedAfterMs !== undefined
        ? `, the last ${seconds(r.flood.allAcceptedAfterMs)} after the first request`
        : ''),
  ]);
  t.push([
    'refused for load, retried',
    `429 rate_limited: ${r.flood.byStatus['429'] ?? 0}; 503: ${fmt(r.flood.unavailableByCode)} (of ${r.flood.requests} requests)`,
  ]);
}

function faultRows(r: ChaosReport, t: Rows, section: (name: string) => void): void {
  section('faults injected');
  t.push([
    'dropped responses after commit',
    `${r.faults.droppedResponses} (${fmt(r.faults.droppedResponsesByService)}) in ${r.faults.dropWindows} windows`,
  ]);
  t.push([
    'crashes (SIGKILL) right after a commit',
    `${r.faults.crashedAfterCommit} (${fmt(r.faults.crashedAfterCommitByService)}) in ${r.faults.crashWindows} windows`,
  ]);
  t.push(['failures before commit', `${r.faults.failedBeforeCommit} in ${r.faults.failWindows} windows`]);
  t.push(['delays past the activity timeout', `${r.faults.delayed} requests held in ${r.faults.delayWindows} windows`]);
  t.push(['downtime > step deadline', `${r.faults.downWindows} windows, ${r.faults.refusedWhileDown} connections refused`]);
  t.push(['downstream calls failed', fmt(r.faults.downstreamCallsFailed)]);
  section('crashes and restarts, by kind');
  for (const [kind] of PROCESS_FAULT_RATES[r.topology]) {
    const n = r.faults.processes[kind] ?? 0;
    const details: string[] = [];
    const inFlight = r.faults.inFlightAtKill[kind];
    if (inFlight?.length) details.push(`requests in flight at the kill: ${inFlight.join(', ')}`);
    const down = r.faults.downMs[kind];
    if (down?.length) details.push(`down ${down.map((ms) => seconds(ms)).join(', ')}`);
    if (kind === 'temporal_restart') details.push(`/readyz while down: ${fmt(r.faults.readyzWhileTemporalDown)}`);
    t.push([PROCESS_FAULT_LABELS[kind], `${n}${details.length ? ` (${details.join('; ')})` : ''}`]);
  }
  t.push(['processes that died on their own', fmt(r.faults.unexpectedExits)]);
}

function outcomeRows(r: ChaosReport, t: Rows, section: (name: string) => void): void {
  section('outcomes (audited)');
  t.push(['succeeded', String(r.outcomes.succeeded)]);
  t.push(['failed', `${r.outcomes.failed} (${fmt(r.outcomes.byCode)})`]);
  t.push([
    '  by type',
    Object.entries(r.outcomes.byType)
      .map(([type, o]) => `${type} ${o.succeeded} succeeded, ${o.failed} failed`)
      .join('; '),
  ]);
  t.push(['NeedsAttention', `${r.outcomes.needsAttention} raised; ${r.outcomes.openNeedsAttention} still open`]);
  t.push(['open past the bound / never started', `${r.outcomes.open} / ${r.outcomes.neverStarted}`]);
  if (r.webhooks) {
    t.push([
      'completion webhooks',
      `${r.webhooks.delivered} delivered; ${r.webhooks.posts} POSTs, ${r.webhooks.redeliveries} redeliveries, ` +
        `${r.webhooks.refused} refused by the receiver; receiver down ${r.webhooks.receiverDownWindows} times`,
    ]);
  }
  t.push(['money', r.conservation.accounts.map((a) => `${a.id} −${a.initial - a.final}`).join(', ')]);
  t.push([
    '  charged out / moved between',
    `${r.conservation.money.chargedOut} charged out of the accounts by succeeded operations (they fell by ${r.conservation.money.fell}); ` +
      `${r.conservation.money.movedBetweenAccounts} moved between them`,
  ]);
  t.push(['stock confirmed', r.conservation.skus.map((s) => `${s.sku} ${s.confirmedByOps} (held ${s.held})`).join(', ')]);
  section('result');
  t.push(['violations', String(r.violations.length)]);
  t.push(['findings (not violations)', r.findings.length === 0 ? '-' : r.findings.map((f) => `• ${f}`).join('\n')]);
  t.push([
    'timings',
    `stack ${seconds(r.timings.stackStartMs)}, load ${seconds(r.timings.loadMs)}, settle ${seconds(r.timings.settleMs)}, audit ${seconds(r.timings.auditMs)}, total ${seconds(r.timings.totalMs)}`,
  ]);
}

export function renderViolations(r: ChaosReport, limit = 40): string {
  // Global checks first (they name no key), then per operation.
  const ordered = [...r.violations.filter((v) => !v.key), ...r.violations.filter((v) => v.key)];
  const lines = ordered.slice(0, limit).map((v) => `  [${v.rule}] ${v.key ? `${v.key}: ` : ''}${v.message}`);
  if (r.violations.length > limit) lines.push(`  … and ${r.violations.length - limit} more (see the JSON report)`);
  return lines.join('\n');
}

export { count as sumCounts };
