// What each operation leaves in Temporal: state transitions (mutable-state updates, from
// DescribeWorkflowExecution's raw execution info), history length and size, and the
// event types of one history per kind, retrysafe next to the bare workflow it maps to.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { median, spreadSample } from './stats.js';

const EventType = proto.temporal.api.enums.v1.EventType;

export interface HistoryCost {
  kind: string;
  sampled: number;
  stateTransitions: number;
  historyEvents: number;
  historyBytes: number;
  /** Event type → count, from one execution. */
  events: Record<string, number>;
}

export async function historyCost(client: Client, kind: string, workflowIds: string[], sample: number): Promise<HistoryCost> {
  const picked = spreadSample(workflowIds, sample);
  const transitions: number[] = [];
  const lengths: number[] = [];
  const sizes: number[] = [];
  for (const workflowId of picked) {
    const res = await client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId } });
    const info = res.workflowExecutionInfo;
    transitions.push(Number(info?.stateTransitionCount ?? Number.NaN));
    lengths.push(Number(info?.historyLength ?? Number.NaN));
    sizes.push(Number(info?.historySizeBytes ?? Number.NaN));
  }
  const events: Record<string, number> = {};
  if (picked[0]) {
    const history = await client.workflow.getHandle(picked[0]).fetchHistory();
    for (const e of history.events ?? []) {
      const name = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
      events[name] = (events[name] ?? 0) + 1;
    }
  }
  return {
    kind,
    sampled: picked.length,
    stateTransitions: median(transitions),
    historyEvents: median(lengths),
    historyBytes: median(sizes),
    events,
  };
}
