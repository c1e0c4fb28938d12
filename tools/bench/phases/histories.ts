// After the timed scenarios, from the histories of what they finished: what each kind leaves
// in Temporal (state transitions and history length and size from DescribeWorkflowExecution,
// and the event types of one history), and where the time of an execution goes at the lowest
// concurrency, read off its history's timestamps: each workflow task from scheduled to
// started (dispatch) and started to completed (the worker), each activity from scheduled to
// started and started to completed, and each local activity from its marker (it runs inside
// a workflow task: from the task's start, or the previous local activity's completion, to
// its own completion), against the execution's start → close. Medians over a sample spread
// over the run.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { operationRef } from '../../../workflows/identity.js';
import { median, spreadSample } from '../load.js';
import { TENANT } from '../workload.js';
import { engine, finishedOf, type BenchContext } from './context.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The SDK's marker name for a local activity's outcome. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

export interface HistoryCost {
  kind: string;
  sampled: number;
  stateTransitions: number;
  historyEvents: number;
  historyBytes: number;
  /** Event type → count, from one execution. */
  events: Record<string, number>;
}

export interface Timeline {
  kind: string;
  sampled: number;
  /** Median over the sampled operations of each phase's per-operation total, ms; `inside`: within another row's time. */
  phases: Array<{ phase: string; medianMs: number; inside?: boolean }>;
  startToCloseMs: number;
  /** Workflow tasks per operation (median). */
  workflowTasks: number;
  /** What step N ran (activity type, snake case), from the sampled history with the most. */
  stepNames: string[];
}

const ms = (t: proto.google.protobuf.ITimestamp | null | undefined) =>
  t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : Number.NaN;

/** The activity type and completion time a local activity's marker records (an RFC 3339 string or {seconds, nanos}). */
function localActivityMarker(e: HistoryEvent): { type: string; completedAt: number } | undefined {
  const attrs = e.markerRecordedEventAttributes;
  if (attrs?.markerName !== LOCAL_ACTIVITY_MARKER) return undefined;
  try {
    const json = JSON.parse(Buffer.from(attrs.details?.data?.payloads?.[0]?.data ?? []).toString('utf8')) as {
      activity_type?: string;
      complete_time?: string | { seconds: number | string; nanos?: number };
    };
    const t = json.complete_time;
    const completedAt = typeof t === 'string' ? Date.parse(t) : t ? Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6 : Number.NaN;
    return { type: json.activity_type ?? 'local activity', completedAt };
  } catch {
    return { type: 'local activity', completedAt: Number.NaN };
  }
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The phases of one execution's history, ms by name in first-seen order (`inside` ones marked); steps numbered as scheduled. */
export function phasesOf(events: HistoryEvent[]) {
  const phases = new Map<string, number>();
  const inside = new Set<string>();
  const add = (name: string, v: number) => phases.set(name, (phases.get(name) ?? 0) + v);
  const at = new Map<number, number>();
  const stepOf = new Map<number, string>();
  const stepNames: string[] = [];
  let [workflowTasks, localFrom, started, closed] = [0, Number.NaN, Number.NaN, Number.NaN];
  for (const e of events) {
    const t = ms(e.eventTime);
    at.set(Number(e.eventId), t);
    const since = (id: unknown) => t - at.get(Number(id))!;
    const marker = localActivityMarker(e);
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) started = t;
    else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      workflowTasks++;
      localFrom = t;
      add('workflow tasks: scheduled → started (dispatch)', since(e.workflowTaskStartedEventAttributes?.scheduledEventId));
    } else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
      add('workflow tasks: started → completed (worker)', since(e.workflowTaskCompletedEventAttributes?.startedEventId));
    else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      stepNames.push(snake(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?'));
      stepOf.set(Number(e.eventId), `step ${stepNames.length}`);
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const scheduled = e.activityTaskStartedEventAttributes?.scheduledEventId;
      add(`${stepOf.get(Number(scheduled))}: scheduled → started (dispatch)`, since(scheduled));
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const a = e.activityTaskCompletedEventAttributes;
      add(`${stepOf.get(Number(a?.scheduledEventId))}: started → completed (run)`, since(a?.startedEventId));
    } else if (marker) {
      stepNames.push(snake(marker.type));
      const name = `step ${stepNames.length}: local activity (inside its workflow task)`;
      inside.add(name);
      add(name, marker.completedAt - localFrom);
      localFrom = marker.completedAt;
    } else if (
      /^EVENT_TYPE_WORKFLOW_EXECUTION_(COMPLETED|FAILED|TIMED_OUT|TERMINATED|CANCELED)$/.test(EventType[e.eventType ?? 0] ?? '')
    )
      closed = t;
  }
  phases.set('start → close', closed - started);
  return { phases, inside, workflowTasks, stepNames };
}

/** How an execution ran its steps: regular activities, local activities (their markers), both or none. */
export function recordedActivityKind(events: HistoryEvent[]): 'regular' | 'local' | 'mixed' | 'none' {
  const regular = events.some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  const local = events.some((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER);
  return regular && local ? 'mixed' : regular ? 'regular' : local ? 'local' : 'none';
}

/** The medians of each phase over `sample` executions among `workflowIds`, and what the rows do not cover of start → close. */
export async function timelineOf(client: Client, kind: string, workflowIds: string[], sample: number): Promise<Timeline> {
  const picked = spreadSample(workflowIds, sample);
  const each = await Promise.all(
    picked.map(async (id) => phasesOf((await client.workflow.getHandle(id).fetchHistory()).events ?? [])),
  );
  const widest = each.reduce((a, b) => (b.phases.size > a.phases.size ? b : a));
  const med = (name: string) => median(each.map((p) => p.phases.get(name) ?? 0));
  const names = [...widest.phases.keys()].filter((n) => n !== 'start → close');
  // What no row covers, per operation, then its median: the time between events (a completed
  // activity and the workflow task it schedules, the last task and the close).
  const between = median(
    each.map((p) => {
      const covered = [...p.phases].filter(([n]) => n !== 'start → close' && !widest.inside.has(n));
      return (p.phases.get('start → close') ?? Number.NaN) - covered.reduce((s, [, v]) => s + v, 0);
    }),
  );
  return {
    kind,
    sampled: picked.length,
    phases: [
      ...names.map((phase) => ({ phase, medianMs: med(phase), ...(widest.inside.has(phase) ? { inside: true } : {}) })),
      { phase: 'between events (not covered above)', medianMs: between },
    ],
    startToCloseMs: median(each.map((p) => p.phases.get('start → close') ?? Number.NaN)),
    workflowTasks: median(each.map((p) => p.workflowTasks)),
    stepNames: each.reduce((a, b) => (b.stepNames.length > a.length ? b.stepNames : a), [] as string[]),
  };
}

async function historyCost(client: Client, kind: string, workflowIds: string[], sample: number): Promise<HistoryCost> {
  const picked = spreadSample(workflowIds, sample);
  const infos = await Promise.all(
    picked.map(async (workflowId) => {
      const res = await client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId } });
      return res.workflowExecutionInfo;
    }),
  );
  const events: Record<string, number> = {};
  for (const e of picked[0] ? ((await client.workflow.getHandle(picked[0]).fetchHistory()).events ?? []) : []) {
    const name = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
    events[name] = (events[name] ?? 0) + 1;
  }
  const of = (field: 'stateTransitionCount' | 'historyLength' | 'historySizeBytes') =>
    median(infos.map((i) => Number(i?.[field] ?? Number.NaN)));
  return {
    kind,
    sampled: picked.length,
    stateTransitions: of('stateTransitionCount'),
    historyEvents: of('historyLength'),
    historyBytes: of('historySizeBytes'),
    events,
  };
}

export async function readHistories(ctx: BenchContext): Promise<void> {
  const { client } = engine(ctx);
  const operations = ctx.results.operations!;
  // Operations through the API are recorded by key; everything else by workflow ID.
  const owns = new Set(operations.map((o) => o.own));
  const ids = (kind: string) =>
    owns.has(kind) ? finishedOf(ctx, kind).map((k) => operationRef(TENANT, k).workflowId) : finishedOf(ctx, kind);
  const historyKinds = (['own', 'fair', 'bare', 'tracked'] as const).flatMap((k) => operations.map((o) => o[k]!));
  for (const kind of new Set(historyKinds))
    if (ids(kind).length > 0) ctx.results.history.push(await historyCost(client, kind, ids(kind), ctx.mode.transitionSample));
  const lowest = `-c${Math.min(...ctx.mode.concurrencies)}-`;
  const bySteps = [...operations].sort((a, b) => b.activities - a.activities);
  for (const kind of new Set(bySteps.flatMap((o) => [o.own, o.bare, o.fair!]))) {
    const sample = ids(kind).filter((id) => id.includes(lowest));
    if (sample.length > 0) (ctx.results.timeline ??= []).push(await timelineOf(client, kind, sample, ctx.mode.timelineSample));
  }
}
