// Where the time of one operation goes inside Temporal, read off its history's timestamps:
// each workflow task from scheduled to started (waiting for dispatch to a worker) and from
// started to completed (the worker running it), each activity from scheduled to started
// and started to completed, and each local activity from its marker (it runs inside a
// workflow task: from the task's start, or the previous local activity's completion, to
// its own completion), against the execution's start → close. Medians
// over a sample of the run's operations at concurrency 1, where nothing queues behind
// another operation.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { median, spreadSample } from './stats.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The SDK's marker name for a local activity's outcome. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

export interface Phase {
  phase: string;
  /** Median over the sampled operations, ms. */
  medianMs: number;
  /** Part of start → close that no other row covers (local activities run inside workflow tasks). */
  inside?: boolean;
}

export interface Timeline {
  kind: string;
  sampled: number;
  phases: Phase[];
  /** Median start → close, ms. */
  startToCloseMs: number;
  /** Workflow tasks per operation (median). */
  workflowTasks: number;
  /** What step N ran (activity type, snake case), from the first sampled history. */
  stepNames: string[];
}

/** One operation's phases, in ms, keyed by phase name. */
export type OperationPhases = Map<string, number>;

function ms(t: proto.google.protobuf.ITimestamp | null | undefined): number {
  if (!t) return Number.NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

/** A timestamp as the SDK writes it into a marker's JSON: an RFC 3339 string or {seconds, nanos}. */
function markerTime(v: unknown): number {
  if (typeof v === 'string') return Date.parse(v);
  if (v && typeof v === 'object' && 'seconds' in v) {
    const t = v as { seconds: number | string; nanos?: number };
    return Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
  }
  return Number.NaN;
}

/** The activity type and completion time a local activity's marker records (the worker's clock, this machine's). */
function localActivityMarker(e: HistoryEvent): { type: string; completedAt: number } | undefined {
  const attrs = e.markerRecordedEventAttributes;
  if (attrs?.markerName !== LOCAL_ACTIVITY_MARKER) return undefined;
  try {
    const data = attrs.details?.data?.payloads?.[0]?.data;
    const json = JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { activity_type?: string; complete_time?: unknown };
    return { type: json.activity_type ?? 'local activity', completedAt: markerTime(json.complete_time) };
  } catch {
    return { type: 'local activity', completedAt: Number.NaN };
  }
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The phases of one execution's history. Steps are numbered in the order they were scheduled. */
export function phasesOf(events: HistoryEvent[]): {
  phases: OperationPhases;
  order: string[];
  workflowTasks: number;
  stepNames: string[];
} {
  const phases: OperationPhases = new Map();
  const order: string[] = [];
  const add = (name: string, v: number, inside = false) => {
    if (!phases.has(name)) order.push(inside ? `${name}\u0000inside` : name);
    phases.set(name, (phases.get(name) ?? 0) + v);
  };
  const at = new Map<number, number>();
  const activityName = new Map<number, string>();
  const stepNames: string[] = [];
  let workflowTasks = 0;
  /** Where the next local activity's time starts: its task's start, or the previous one's completion. */
  let localFrom = Number.NaN;
  let started = Number.NaN;
  let closed = Number.NaN;
  for (const e of events) {
    const t = ms(e.eventTime);
    const id = Number(e.eventId);
    at.set(id, t);
    switch (e.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        started = t;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        workflowTasks++;
        localFrom = t;
        add(
          'workflow tasks: scheduled → started (dispatch)',
          t - at.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId))!,
        );
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        add(
          'workflow tasks: started → completed (worker)',
          t - at.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId))!,
        );
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        stepNames.push(snake(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?'));
        activityName.set(id, `step ${stepNames.length}`);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const scheduled = Number(e.activityTaskStartedEventAttributes?.scheduledEventId);
        add(`${activityName.get(scheduled)}: scheduled → started (dispatch)`, t - at.get(scheduled)!);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const a = e.activityTaskCompletedEventAttributes;
        add(
          `${activityName.get(Number(a?.scheduledEventId))}: started → completed (run)`,
          t - at.get(Number(a?.startedEventId))!,
        );
        break;
      }
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        const marker = localActivityMarker(e);
        if (marker) {
          stepNames.push(snake(marker.type));
          add(`step ${stepNames.length}: local activity (inside its workflow task)`, marker.completedAt - localFrom, true);
          localFrom = marker.completedAt;
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        closed = t;
        break;
      default:
    }
  }
  phases.set('start → close', closed - started);
  return { phases, order, workflowTasks, stepNames };
}

/**
 * Summarises the phases of `sample` executions among `workflowIds` (spread over the list):
 * the median of each phase, and what the rows do not cover of start → close.
 */
export async function timelineOf(client: Client, kind: string, workflowIds: string[], sample: number): Promise<Timeline> {
  const picked = spreadSample(workflowIds, sample);
  const perOp: OperationPhases[] = [];
  const tasks: number[] = [];
  let order: string[] = [];
  let stepNames: string[] = [];
  for (const workflowId of picked) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const one = phasesOf(history.events ?? []);
    perOp.push(one.phases);
    tasks.push(one.workflowTasks);
    if (one.order.length > order.length) order = one.order;
    if (one.stepNames.length > stepNames.length) stepNames = one.stepNames;
  }
  const med = (name: string) => median(perOp.map((p) => p.get(name) ?? 0));
  const phases: Phase[] = order.map((key) => {
    const [name, inside] = key.split('\u0000') as [string, string | undefined];
    return { phase: name, medianMs: med(name), ...(inside ? { inside: true } : {}) };
  });
  const startToCloseMs = median(perOp.map((p) => p.get('start → close') ?? Number.NaN));
  // What no row covers, per operation, then its median: time between events (a completed
  // activity and the workflow task it schedules, the last task and the close).
  const outside = median(
    perOp.map((p) => {
      let covered = 0;
      for (const [name, v] of p) {
        if (name === 'start → close' || order.includes(`${name}\u0000inside`)) continue;
        covered += v;
      }
      return (p.get('start → close') ?? Number.NaN) - covered;
    }),
  );
  phases.push({ phase: 'between events (not covered above)', medianMs: outside });
  return { kind, sampled: picked.length, phases, startToCloseMs, workflowTasks: median(tasks), stepNames };
}

/**
 * How an execution ran its steps: regular activities (ACTIVITY_TASK_SCHEDULED) or local
 * activities (their markers); 'mixed' or 'none' otherwise.
 */
export function recordedActivityKind(events: HistoryEvent[]): 'regular' | 'local' | 'mixed' | 'none' {
  const regular = events.some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  const local = events.some((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER);
  return regular && local ? 'mixed' : regular ? 'regular' : local ? 'local' : 'none';
}
