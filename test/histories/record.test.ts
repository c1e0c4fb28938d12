// Records the workflow histories that replay.test.ts replays. Skipped unless
// RECORD_HISTORIES=1: re-record only on purpose, when a workflow change is meant to be
// incompatible (and then version the workflow instead if old runs may still be open).
//   RECORD_HISTORIES=1 npx vitest run test/histories/record.test.ts
//
// It writes only the `v5-*` files: today's code, started as the API starts it (memo, search
// attributes, summaries, the program in the input). The older sets are what earlier code
// wrote and must never be overwritten: `v1-*` from before steps ran a local first attempt,
// the unprefixed ones from before a fenced step fenced the later ones, cancels and
// completion webhooks, `v3-*` from before operations were definitions run by one generic
// workflow (and a cancel seen at the end of the last step), `v4-*` from before operations
// carried their program (declared calls as one generic activity, payment's and checkout's
// steps as hand-written ones). A change that makes new histories worth keeping records them
// under the next prefix, beside these.
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { execa } from 'execa';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { fingerprint } from '../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../client/api/start-options.js';
import { programFor } from '../../common/programs.js';
import { notificationWorkflowId, operationRef } from '../../workflows/identity.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import type { OperationOutcome, OperationSettings, OperationType } from '../../workflows/contracts.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { pendingActivity } from '../workflows/wait-for.js';

/** The prefix of every file this recorder writes: the histories of today's workflow code. */
const PREFIX = 'v5';
const TENANT = 'recorder';

const recording = process.env.RECORD_HISTORIES === '1';
// Started only when recording: a file whose tests are all skipped runs no hooks.
const stack = useFullStack({ name: 'record', api: 'none' });

beforeAll(async () => {
  await stack.bank.openAccount('acc_rich', 1_000_000);
  await stack.bank.openAccount('acc_poor', 10);
  await stack.bank.openAccount('acc_payee', 0);
  await stack.reservations.setStock('sku_hist', 1_000);
  await stack.reservations.setStock('sku_scarce', 1);
});

const pay = { account: 'acc_rich', amount: 1250, currency: 'EUR' };
const cart = { ...pay, items: [{ sku: 'sku_hist', quantity: 2 }] };

interface Started {
  name: string;
  handle: WorkflowHandle;
  operation: ReturnType<typeof operationRef>;
}

/** Starts one operation exactly as the API does: same options, memo and search attributes. */
async function start(
  name: string,
  type: OperationType,
  request: Record<string, unknown>,
  overrides: Partial<OperationSettings> = {},
): Promise<Started> {
  const operation = operationRef(TENANT, `history-${name}-${uniqueId('r')}`);
  const settings: OperationSettings = { stepDeadlineMs: 20_000, attentionAfterMs: 60_000, ...overrides };
  const handle = await stack.temporal.workflow.start(
    type,
    workflowStartOptions(
      builtInCatalog.get(type)!,
      programFor(builtInCatalog.get(type)!),
      operation,
      { type, fingerprint: fingerprint(type, request), request },
      settings,
      stack.taskQueue,
    ),
  );
  return { name: `${PREFIX}-${name}`, handle, operation };
}

/** Waits for the operation's end and stores its history as `<prefix>-<name>.json`. */
async function record({ name, handle }: Started): Promise<OperationOutcome> {
  const outcome = (await handle.result()) as OperationOutcome;
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
  return outcome;
}

const recordRun = async (...args: Parameters<typeof start>) => record(await start(...args));
const codeOf = (outcome: OperationOutcome | undefined) => (outcome?.status === 'failed' ? outcome.error.code : undefined);

/**
 * Requests a cancel while the operation's first step is in flight. The first attempt is a
 * local activity, run inside the first workflow task, so "in flight" is: that task has
 * started, and a little more, so the slowed downstream call is under way when the request lands.
 */
async function cancelWhileFirstStepRuns(handle: WorkflowHandle, afterMs = 300): Promise<void> {
  const started = proto.temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;
  const deadline = Date.now() + 30_000;
  while ((await handle.describe()).raw.pendingWorkflowTask?.state !== started) {
    if (Date.now() > deadline) throw new Error(`${handle.workflowId}: its first workflow task never started`);
    await sleep(20);
  }
  await sleep(afterMs);
  await handle.cancel();
}

describe.runIf(recording)(`records today's histories as ${PREFIX}-*`, () => {
  it('payment and checkout: success and business refusals (funds, stock)', async () => {
    expect((await recordRun('payment-succeeded', 'payment', pay)).status).toBe('succeeded');
    expect(codeOf(await recordRun('payment-insufficient-funds', 'payment', { ...pay, account: 'acc_poor' }))).toBe(
      'insufficient_funds',
    );
    expect((await recordRun('checkout-succeeded', 'checkout', cart)).status).toBe('succeeded');
    expect(codeOf(await recordRun('checkout-insufficient-funds', 'checkout', { ...cart, account: 'acc_poor' }))).toBe(
      'insufficient_funds',
    );
    const outOfStock = await recordRun('checkout-out-of-stock', 'checkout', {
      ...cart,
      items: [{ sku: 'sku_scarce', quantity: 2 }],
    });
    expect(outOfStock).toMatchObject({ status: 'failed', error: { code: 'out_of_stock', compensations: [] } });
  });

  it('transfer: success, and a credit refused (the debit reversed)', async () => {
    const move = { from: 'acc_rich', to: 'acc_payee', amount: 500, currency: 'EUR' };
    expect((await recordRun('transfer-succeeded', 'transfer', move)).status).toBe('succeeded');
    const refused = await recordRun('transfer-destination-not-found', 'transfer', { ...move, to: 'acc_nobody' });
    expect(refused).toMatchObject({
      status: 'failed',
      error: { code: 'destination_not_found', compensations: ['reverse_debit'] },
    });
  });

  it('a charge fenced at its deadline, in a payment and in a checkout', async () => {
    // Down for the charges only: once both fences (reversals) are under way the bank comes
    // back, so they complete.
    const fenced = await stack.bank.withFaults({ down: true }, async () => {
      const started = [
        await start('payment-fenced', 'payment', pay, { stepDeadlineMs: 2_000 }),
        await start('checkout-charge-fenced', 'checkout', cart, { stepDeadlineMs: 2_000 }),
      ];
      await Promise.all(started.map(({ handle }) => pendingActivity(handle, 'reverse_charge')));
      return started;
    });
    const [payment, checkout] = await Promise.all(fenced.map(record));
    expect(payment).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
    });
    expect(checkout).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge', 'release_reservation'] },
    });
  });

  it('a checkout cancelled while reserve_items runs slowly', async () => {
    // Under the worker's 2 s downstream timeout, so the slow hold answers rather than times out.
    const run = await stack.reservations.withFaults({ delayMs: 1_000 }, async () => {
      const started = await start('checkout-cancelled', 'checkout', cart);
      await cancelWhileFirstStepRuns(started.handle);
      return started;
    });
    expect(await record(run)).toMatchObject({ status: 'failed', error: { code: 'cancelled' }, cancelRequested: true });
  });

  it('a payment cancelled while its only step, the charge, runs', async () => {
    // Slower than the worker's 2 s downstream timeout: the local first attempt gives up while
    // the bank still holds the key, so the charge goes on as a regular activity, and the
    // cancel, sent during the local attempt, is delivered while that step is in flight.
    // Fast again after: the retries get the charge the first attempt committed, replayed.
    const run = await stack.bank.withFaults({ delayMs: 3_000 }, async () => {
      const started = await start('payment-cancelled-during-charge', 'payment', pay);
      await cancelWhileFirstStepRuns(started.handle);
      await pendingActivity(started.handle, 'charge_payment');
      return started;
    });
    // Whatever today's code makes of it is what the rewrite must replay: the step in flight
    // finishes, and a payment has no step after it for the cancel to stop.
    const outcome = await record(run);
    expect(outcome.cancelRequested).toBe(true);
    if (outcome.status === 'failed')
      expect(outcome.error).toMatchObject({ code: 'cancelled', compensations: ['reverse_charge'] });
    console.info(`${run.name}: ${outcome.status}${outcome.status === 'failed' ? ` (${outcome.error.code})` : ''}`);
  });

  it('a payment whose tenant has a completion webhook (the parent; its notification child is then ended)', async () => {
    const run = await start('payment-webhook', 'payment', pay, {
      // The API's defaults when a tenant has a webhook URL: 24 h of redeliveries, the local Web UI.
      notify: { deadlineMs: 86_400_000, temporalUiUrl: 'http://localhost:8233' },
    });
    const child = stack.temporal.workflow.getHandle(notificationWorkflowId(run.operation));
    try {
      expect(await record(run)).toMatchObject({ status: 'succeeded', notify: true });
      // The parent started it before it closed: the start is in the parent's history.
      expect((await child.describe()).raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(run.handle.workflowId);
    } finally {
      // This worker has no webhook URL, so the delivery would retry until its deadline.
      await child.terminate('history recorded; nothing to deliver to');
    }
  });
});
