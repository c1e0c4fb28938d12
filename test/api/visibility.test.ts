// Rows of the visibility store, decoded by the API from the raw page (which carries the
// token the cursor needs), must read exactly as the SDK's own describe() reads the same
// execution: memo, search attributes, status and times. Against the real dev server; the
// workflows start on a task queue no worker polls, so each stays as the test leaves it.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowExecutionDescription } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engineDeadline } from '../../client/api/engine/deadline.js';
import { listPage, visibilityQuery, type VisibleExecution } from '../../client/api/engine/visibility.js';
import { workflowStartOptions } from '../../client/api/start-options.js';
import { SearchAttributes } from '../../workflows/contracts.js';
import { programFor } from '../../common/programs.js';
import { checkout } from '../../workflows/definitions/checkout.js';
import { payment } from '../../workflows/definitions/payment.js';
import { operationRef } from '../../workflows/identity.js';

let connection: Connection;
let client: Client;
const tenant = `vis${randomUUID().slice(0, 8)}`;
const settings = { stepDeadlineMs: 60_000, attentionAfterMs: 300_000 };

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: 'default' });
});

afterAll(async () => {
  await connection?.close();
});

const call = () => engineDeadline(client, 10_000, () => new Date());

/** Polls the visibility store (eventually consistent) until `ready` holds for the row of `workflowId`. */
async function rowOf(workflowId: string, ready: (row: VisibleExecution) => boolean): Promise<VisibleExecution> {
  for (let i = 0; ; i++) {
    const page = await listPage(client, 'default', call(), { query: visibilityQuery(tenant, {}), pageSize: 100 });
    const row = page.executions.find((e) => e.workflowId === workflowId);
    if (row && ready(row)) return row;
    if (i >= 80) throw new Error(`no visibility row for ${workflowId}`);
    await sleep(250);
  }
}

function expectSameAsDescribe(row: VisibleExecution, desc: WorkflowExecutionDescription): void {
  expect(row).toMatchObject({ workflowId: desc.workflowId, runId: desc.runId, status: { name: desc.status.name } });
  expect(row.startTime.toISOString()).toBe(desc.startTime.toISOString());
  expect(row.closeTime?.toISOString()).toBe(desc.closeTime?.toISOString());
  expect(row.memo).toEqual(desc.memo);
  for (const key of [
    SearchAttributes.OperationType,
    SearchAttributes.OperationStatus,
    SearchAttributes.Tenant,
    SearchAttributes.NeedsAttention,
  ]) {
    expect(row.typedSearchAttributes?.get(key), key.name).toEqual(desc.typedSearchAttributes.get(key));
  }
}

describe('visibility rows', () => {
  it('decode a running and then a terminated execution exactly as describe() does', async () => {
    const ref = operationRef(tenant, `order/${randomUUID()}`);
    const request = { account: 'acc_alice', amount: 1250, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 2 }] };
    const claim = { type: 'checkout' as const, fingerprint: 'f'.repeat(64), request };
    const handle = await client.workflow.start(
      'checkout',
      workflowStartOptions(checkout, programFor(checkout), ref, claim, settings, `nobody-${randomUUID()}`),
    );

    const running = await rowOf(ref.workflowId, () => true);
    expectSameAsDescribe(running, await handle.describe());
    expect(running.memo).toMatchObject({ type: 'checkout', tenant, key: ref.key, request });
    expect(running.typedSearchAttributes?.get(SearchAttributes.NeedsAttention)).toBe(false);
    expect(running.closeTime).toBeUndefined();

    await handle.terminate('test');
    const terminated = await rowOf(ref.workflowId, (row) => row.status.name === 'TERMINATED');
    expectSameAsDescribe(terminated, await handle.describe());
    expect(terminated.closeTime).toBeInstanceOf(Date);
  });

  it('hands back a page token while more rows match, and an empty one on the last page', async () => {
    const queue = `nobody-${randomUUID()}`;
    const pageTenant = `${tenant}p`;
    for (let i = 0; i < 3; i++) {
      const ref = operationRef(pageTenant, `k${i}`);
      await client.workflow.start(
        'payment',
        workflowStartOptions(
          payment,
          programFor(payment),
          ref,
          { type: 'payment', fingerprint: 'f', request: {} },
          settings,
          queue,
        ),
      );
    }
    const query = visibilityQuery(pageTenant, {});
    for (let i = 0; (await listPage(client, 'default', call(), { query, pageSize: 10 })).executions.length < 3; i++) {
      if (i >= 80) throw new Error('rows did not become visible');
      await sleep(250);
    }
    const first = await listPage(client, 'default', call(), { query, pageSize: 2 });
    expect(first.executions).toHaveLength(2);
    expect(first.nextPageToken.length).toBeGreaterThan(0);
    const second = await listPage(client, 'default', call(), { query, pageSize: 2, pageToken: first.nextPageToken });
    expect(second.executions).toHaveLength(1);
    expect(second.nextPageToken.length).toBe(0);
    const ids = [...first.executions, ...second.executions].map((e) => e.workflowId).sort();
    expect(ids).toEqual([0, 1, 2].map((i) => `${pageTenant}/k${i}`));
    for (const id of ids) await client.workflow.getHandle(id).terminate('test');
  });
});
