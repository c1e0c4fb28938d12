// The payment workflow against the real dev server and the real bank, started directly
// with a Temporal client (the HTTP API has its own end-to-end tests; every branch of the
// saga, with scripted activities and skipped time, is in payment-saga.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { operationRef } from '../../workflows/identity.js';
import { type OperationOutcome } from '../../workflows/contracts.js';
import { startBank, startWorker, temporalClient, uniqueId, type BankHandle, type WorkerHandle } from '../support/stack.js';
import { pendingActivity } from './wait-for.js';

let bank: BankHandle;
let worker: WorkerHandle;
let client: Client;
let closeClient: () => Promise<void>;
const taskQueue = uniqueId('payment-wf');

beforeAll(async () => {
  bank = await startBank();
  worker = await startWorker({ taskQueue, bankUrl: bank.url });
  ({ client, close: closeClient } = await temporalClient());
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await bank?.close();
});

async function runPayment(
  account: string,
  amount: number,
  settings = { stepDeadlineMs: 20_000, attentionAfterMs: 60_000, holdTtlSeconds: 900 },
): Promise<{ workflowId: string; outcome: OperationOutcome }> {
  const key = uniqueId('pay');
  const workflowId = operationRef('t1', key).workflowId;
  const outcome = await client.workflow.execute('payment', {
    taskQueue,
    workflowId,
    args: [{ tenant: 't1', key, request: { account, amount, currency: 'EUR' }, settings }],
  });
  return { workflowId, outcome: outcome as OperationOutcome };
}

describe('payment workflow', () => {
  it('charges once with the derived key <workflowId>/charge and succeeds', async () => {
    const account = uniqueId('acc');
    await bank.openAccount(account, 10_000);
    const { workflowId, outcome } = await runPayment(account, 1250);
    expect(outcome.status).toBe('succeeded');
    expect(outcome.steps).toEqual([{ name: 'charge_payment', status: 'completed', downstreamKey: `${workflowId}/charge` }]);
    expect(await bank.balance(account)).toBe(8750);
    const charge = await bank.charge(`${workflowId}/charge`);
    expect(charge.body).toMatchObject({ status: 'captured', amount: 1250 });
    if (outcome.status === 'succeeded') expect(outcome.result.chargeId).toBe(charge.body.chargeId);
  });

  it('when funds are insufficient, fails with insufficient_funds and runs no compensation', async () => {
    const account = uniqueId('acc');
    await bank.openAccount(account, 100);
    const { outcome } = await runPayment(account, 1250);
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', compensations: [] },
      steps: [{ name: 'charge_payment', status: 'failed' }],
    });
    expect(await bank.balance(account)).toBe(100);
  });

  it('when the bank stays down past the deadline, fences the charge and fails with payment_unavailable', async () => {
    const account = uniqueId('acc');
    await bank.openAccount(account, 10_000);
    await bank.setFaults({ down: true });
    const key = uniqueId('pay');
    const workflowId = operationRef('t1', key).workflowId;
    const handle = await client.workflow.start('payment', {
      taskQueue,
      workflowId,
      args: [
        {
          tenant: 't1',
          key,
          request: { account, amount: 500, currency: 'EUR' },
          settings: { stepDeadlineMs: 3_000, attentionAfterMs: 60_000, holdTtlSeconds: 900 },
        },
      ],
    });
    // Down only for the forward step: the fence (reverse) must reach the bank.
    await pendingActivity(handle, 'reverseCharge');
    await bank.setFaults({ down: false });
    const outcome = (await handle.result()) as OperationOutcome;
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
      steps: [{ name: 'charge_payment', status: 'fenced' }],
    });
    // The tombstone refuses a late-arriving original with that key.
    const late = await fetch(`${bank.url}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `${workflowId}/charge` },
      body: JSON.stringify({ account, amount: 500, currency: 'EUR' }),
    });
    expect(late.status).toBe(410);
    expect(await bank.balance(account)).toBe(10_000);
  });
});
