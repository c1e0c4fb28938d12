// Fairness by tenant inside Temporal: the API starts each operation with its tenant as the
// task queue fairness key, and the embedded server (the tests' one, started as `npm start`
// starts it) dispatches a backlog per key instead of first in, first out. Nothing here runs
// a worker: the test polls the task queues itself over gRPC, so it sees exactly which task
// the server hands out next and what priority the task carries.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApi, type ApiHandle } from '../support/api.js';

const { TaskQueueKind, TaskQueueType, CommandType } = temporal.api.enums.v1;
/** Each tenant's API key: a flooding tenant, a quiet one, and one for the describe alone. */
const SECRETS = { flood: 'flood-secret-0123456789', quiet: 'quiet-secret-0123456789', solo: 'solo-secret-01234567890' };
type Tenant = keyof typeof SECRETS;
const payment = { account: 'acc_alice', amount: 1250, currency: 'EUR' };

let connection: Connection;
let client: Client;
let api: ApiHandle;
let taskQueue: string;
const started: string[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: 'default' });
  // A queue of its own that no worker polls: every task stays in its backlog until the test takes it.
  taskQueue = `fairness-${randomUUID()}`;
  const apiKeys = Object.entries(SECRETS)
    .map(([tenant, secret]) => `${secret}=${tenant}`)
    .join(',');
  api = await startApi({ taskQueue, apiKeys });
});

afterAll(async () => {
  await Promise.all(
    started.map((id) =>
      client.workflow
        .getHandle(id)
        .terminate('test done')
        .catch(() => undefined),
    ),
  );
  await api?.close();
  await connection?.close();
});

/** Starts a payment through the HTTP API, as the tenant's client would; answers its workflow ID. */
async function startPayment(tenant: Tenant): Promise<string> {
  const key = `pay-${randomUUID()}`;
  const res = await api.request('POST', '/v1/payments', {
    body: payment,
    headers: { authorization: `Bearer ${SECRETS[tenant]}`, 'idempotency-key': key, prefer: 'respond-async' },
  });
  expect(res.status).toBe(202);
  started.push(`${tenant}/${key}`);
  return `${tenant}/${key}`;
}

async function backlogOf(type: temporal.api.enums.v1.TaskQueueType): Promise<number> {
  const res = await connection.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type,
    reportStats: true,
  });
  return Number(res.stats?.approximateBacklogCount ?? 0);
}

async function untilBacklog(type: temporal.api.enums.v1.TaskQueueType, count: number): Promise<void> {
  for (let i = 0; (await backlogOf(type)) < count; i++) {
    if (i >= 100) throw new Error(`the backlog never reached ${count} tasks`);
    await sleep(100);
  }
}

const queue = () => ({ name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL });

/** A long poll needs a deadline (the server refuses one without); the tasks are already waiting. */
const poll = <T>(call: () => Promise<T>): Promise<T> => connection.withDeadline(Date.now() + 10_000, call);

describe('task queue fairness by tenant', () => {
  it('starts an operation with its tenant as the fairness key, at the default weight and priority', async () => {
    const workflowId = await startPayment('solo');
    const desc = await client.workflow.getHandle(workflowId).describe();
    const priority = desc.raw.workflowExecutionInfo?.priority;
    expect(priority?.fairnessKey).toBe('solo');
    expect(priority?.fairnessWeight ?? 0).toBe(0);
    expect(priority?.priorityKey ?? 0).toBe(0);
    await client.workflow.getHandle(workflowId).terminate('seen');
  });

  it("hands a quiet tenant's task out ahead of another tenant's backlog, and its activity tasks carry the tenant", async () => {
    const flood: string[] = [];
    for (let i = 0; i < 8; i++) flood.push(await startPayment('flood'));
    // The flood is all in the backlog before the quiet tenant's one task arrives: first in,
    // first out would hand it out last.
    await untilBacklog(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, flood.length);
    const quiet = await startPayment('quiet');
    await untilBacklog(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, flood.length + 1);

    const order: string[] = [];
    let quietTask: Uint8Array | undefined;
    while (order.length < flood.length + 1) {
      const task = await poll(() =>
        connection.workflowService.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: queue(), identity: 'fairness-test' }),
      );
      const id = task.workflowExecution?.workflowId;
      if (!id) continue; // an empty long poll
      order.push(id);
      if (id === quiet) quietTask = task.taskToken ?? undefined;
    }
    expect(order.slice().sort()).toEqual([...flood, quiet].sort());
    // Equal weights: the quiet tenant's first task ranks with the flood's first, ahead of the
    // other seven (ties go to the older task).
    expect(order.indexOf(quiet), order.join('\n')).toBeLessThanOrEqual(1);

    // An activity the workflow schedules with no priority of its own inherits the workflow's.
    await connection.workflowService.respondWorkflowTaskCompleted({
      namespace: 'default',
      taskToken: quietTask,
      identity: 'fairness-test',
      commands: [
        {
          commandType: CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
          scheduleActivityTaskCommandAttributes: {
            activityId: 'probe',
            activityType: { name: 'probe' },
            taskQueue: queue(),
            startToCloseTimeout: { seconds: Long.fromNumber(10) },
            scheduleToCloseTimeout: { seconds: Long.fromNumber(60) },
          },
        },
      ],
    });
    const activity = await poll(() =>
      connection.workflowService.pollActivityTaskQueue({ namespace: 'default', taskQueue: queue(), identity: 'fairness-test' }),
    );
    expect(activity.workflowExecution?.workflowId).toBe(quiet);
    expect(activity.priority?.fairnessKey).toBe('quiet');
  });
});
