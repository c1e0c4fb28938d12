// Records the workflow histories that replay.test.ts replays. Skipped unless
// RECORD_HISTORIES=1: re-record only on purpose, when a workflow change is meant to be
// incompatible (and then version the workflow instead if old runs may still be open).
//   RECORD_HISTORIES=1 npx vitest run test/histories/record.test.ts
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { execa } from 'execa';
import type { Client } from '@temporalio/client';
import { operationRef } from '../../workflows/identity.js';
import { type OperationType } from '../../workflows/contracts.js';
import {
  startBank,
  startReservations,
  startWorker,
  temporalClient,
  uniqueId,
  type BankHandle,
  type ReservationsHandle,
  type WorkerHandle,
} from '../support/stack.js';
import { pendingActivity } from '../workflows/wait-for.js';

const recording = process.env.RECORD_HISTORIES === '1';
let bank: BankHandle;
let reservations: ReservationsHandle;
let worker: WorkerHandle;
let temporal: { client: Client; close(): Promise<void> };
const taskQueue = uniqueId('record');

beforeAll(async () => {
  if (!recording) return;
  [bank, reservations] = await Promise.all([startBank(), startReservations()]);
  worker = await startWorker({ taskQueue, bankUrl: bank.url, reservationsUrl: reservations.url });
  temporal = await temporalClient();
  await bank.openAccount('acc_rich', 1_000_000);
  await bank.openAccount('acc_poor', 10);
  await reservations.setStock('sku_hist', 1_000);
});

afterAll(async () => {
  await worker?.stop();
  await temporal?.close();
  await reservations?.close();
  await bank?.close();
});

/** Starts one operation as the API would (its key in the input and in the workflow ID). */
async function start(name: string, type: OperationType, request: Record<string, unknown>, stepDeadlineMs = 20_000) {
  const operation = operationRef('recorder', `history-${name}-${uniqueId('r')}`);
  const handle = await temporal.client.workflow.start(type, {
    taskQueue,
    workflowId: operation.workflowId,
    args: [
      {
        tenant: operation.tenant,
        key: operation.key,
        request,
        settings: { stepDeadlineMs, attentionAfterMs: 60_000, holdTtlSeconds: 900 },
      },
    ],
  });
  return { name, handle };
}

/** Waits for the operation's end and stores its history as `<name>.json`. */
async function record({ name, handle }: Awaited<ReturnType<typeof start>>) {
  const outcome = await handle.result();
  // The CLI's JSON export is the format Worker.runReplayHistory reads back.
  const { stdout } = await execa(inject('temporalCli'), [
    'workflow',
    'show',
    '--workflow-id',
    handle.workflowId,
    '--address',
    inject('temporalAddress'),
    '--output',
    'json',
  ]);
  writeFileSync(new URL(`./${name}.json`, import.meta.url), stdout.trim() + '\n');
  return outcome as { status: string; error?: { code: string } };
}

const recordRun = async (...args: Parameters<typeof start>) => record(await start(...args));

it.runIf(recording)('records payment and checkout histories: success, business failure, fenced step', async () => {
  const pay = { account: 'acc_rich', amount: 1250, currency: 'EUR' };
  const cart = { ...pay, items: [{ sku: 'sku_hist', quantity: 2 }] };
  expect((await recordRun('payment-succeeded', 'payment', pay)).status).toBe('succeeded');
  expect((await recordRun('payment-insufficient-funds', 'payment', { ...pay, account: 'acc_poor' })).error?.code).toBe(
    'insufficient_funds',
  );
  expect((await recordRun('checkout-succeeded', 'checkout', cart)).status).toBe('succeeded');
  expect((await recordRun('checkout-insufficient-funds', 'checkout', { ...cart, account: 'acc_poor' })).error?.code).toBe(
    'insufficient_funds',
  );

  // Down for the charges only: once both fences (reversals) are under way the bank comes
  // back, so they complete.
  await bank.setFaults({ down: true });
  const fenced = [
    await start('payment-fenced', 'payment', pay, 2_000),
    await start('checkout-charge-fenced', 'checkout', cart, 2_000),
  ];
  await Promise.all(fenced.map(({ handle }) => pendingActivity(handle, 'reverseCharge')));
  await bank.setFaults({ down: false });
  const [payment, checkout] = await Promise.all(fenced.map(record));
  expect(payment!.error?.code).toBe('payment_unavailable');
  expect(checkout!.error?.code).toBe('payment_unavailable');
});
