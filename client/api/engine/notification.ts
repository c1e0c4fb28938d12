// Where an operation's completion webhook stands, for the operations that have one (their
// start memo says so). While the operation runs it is pending without a call; once it ended
// it is read from the notification workflow, one DescribeWorkflowExecution, and a final
// state (delivered, failed) never changes, so it is kept. Tenants without a webhook never
// get here: they pay nothing.
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import proto from '@temporalio/proto';
import { LRUCache } from 'lru-cache';
import { NOTIFICATION_STATUSES, type NotificationState } from '../../../workflows/contracts.js';
import { notificationWorkflowId, type OperationRef } from '../../../workflows/identity.js';
import type { EngineCall } from './deadline.js';

const { PendingActivityState } = proto.temporal.api.enums.v1;

/** The activity whose attempts are the POSTs. */
const DELIVERY_ACTIVITY = 'deliverCompletionEvent';

export const PENDING: NotificationState = { status: 'pending', attempts: 0 };

function isState(value: unknown): value is NotificationState {
  if (typeof value !== 'object' || value === null) return false;
  const { status, attempts } = value as Record<string, unknown>;
  return (NOTIFICATION_STATUSES as readonly unknown[]).includes(status) && typeof attempts === 'number';
}

/** The state a description of the notification workflow shows. */
export function notificationState(description: Pick<WorkflowExecutionDescription, 'status' | 'memo' | 'raw'>): NotificationState {
  const recorded = description.memo?.notification;
  if (isState(recorded)) return recorded;
  if (description.status.name !== 'RUNNING') return { status: 'failed', attempts: 0 };
  const delivery = description.raw.pendingActivities?.find((a) => a.activityType?.name === DELIVERY_ACTIVITY);
  if (!delivery) return PENDING;
  // `attempt` is the attempt under way, or the next one while it waits out its back-off.
  const attempt = delivery.attempt ?? 1;
  const inFlight = delivery.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  return { status: 'pending', attempts: inFlight ? attempt : attempt - 1 };
}

export class NotificationReader {
  private readonly final: LRUCache<string, NotificationState> | undefined;

  constructor(
    private readonly client: Client,
    private readonly call: EngineCall,
    cacheSize: number,
    cacheTtlMs: number,
    maxBytes = 64 * 1024 * 1024,
  ) {
    // Bounded in bytes too: a key (the workflow ID) may be some hundred bytes long.
    this.final =
      cacheSize > 0
        ? new LRUCache({ max: cacheSize, ttl: cacheTtlMs, maxSize: maxBytes, sizeCalculation: (_v, key) => key.length + 64 })
        : undefined;
  }

  /** The webhook of a finished operation. */
  async read(operation: OperationRef): Promise<NotificationState> {
    const id = notificationWorkflowId(operation);
    const known = this.final?.get(id);
    if (known) return known;
    let state: NotificationState;
    try {
      state = notificationState(await this.call(() => this.client.workflow.getHandle(id).describe()));
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // The operation closes only once its notification has started: none means none will be sent.
      state = { status: 'failed', attempts: 0 };
    }
    if (state.status !== 'pending') this.final?.set(id, state);
    return state;
  }
}
