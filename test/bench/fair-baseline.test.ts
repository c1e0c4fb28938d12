// The bench's same-work baseline: a bare workflow that makes an operation's own keyed HTTP
// calls and nothing else. For every operation type of the registry it must move exactly what
// the operation moves, under exactly the keys retrysafe derives: retrysafe's own workflow run
// afterwards for the same key finds every step already done at the sandboxes (a replay, not
// a second effect). And it must be bare: no memo, no search attributes, no compensation.
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { baselineWorkerActivities } from '../../tools/bench/baseline/activities.js';
import type { BareHttpInput } from '../../tools/bench/baseline/workflows.js';
import { BASELINE_WORKFLOWS } from '../../tools/bench/stack.js';
import { resourcesOf, sampleRequest } from '../../tools/bench/workload.js';
import { quietLogger } from '../../tools/quiet-logger.js';
import { programFor } from '../../common/programs.js';
import { fingerprint } from '../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../client/api/start-options.js';
import type { OperationOutcome } from '../../workflows/contracts.js';
import { downstreamKey, operationRef } from '../../workflows/identity.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import {
  startBank,
  startReservations,
  startWorker,
  temporalClient,
  type BankHandle,
  type ReservationsHandle,
  type WorkerHandle,
} from '../support/stack.js';

const BALANCE = 1_000_000;
const STOCK = 1_000;
const SETTINGS = { stepDeadlineMs: 10_000, attentionAfterMs: 300_000 };

describe('the same-work baseline (bareHttp)', () => {
  let bank: BankHandle;
  let reservations: ReservationsHandle;
  let baseline: { worker: Worker; running: Promise<void>; connection: NativeConnection };
  let retrysafe: WorkerHandle;
  let temporal: Awaited<ReturnType<typeof temporalClient>>;
  const queues = { baseline: `bench-baseline-${randomUUID()}`, retrysafe: `bench-retrysafe-${randomUUID()}` };

  beforeAll(async () => {
    [bank, reservations, temporal] = await Promise.all([
      startBank({ faults: false }),
      startReservations({ faults: false }),
      temporalClient(),
    ]);
    // First: it installs the tests' quiet runtime, which must precede any other worker.
    retrysafe = await startWorker({ taskQueue: queues.retrysafe, bankUrl: bank.url, reservationsUrl: reservations.url });
    const bundle = await bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietLogger() });
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await Worker.create({
      connection,
      namespace: 'default',
      taskQueue: queues.baseline,
      workflowBundle: { code: bundle.code },
      activities: baselineWorkerActivities({ bank: bank.url, reservations: reservations.url }),
    });
    baseline = { worker, running: worker.run(), connection };
  }, 120_000);

  afterAll(async () => {
    if (baseline) {
      baseline.worker.shutdown();
      await baseline.running;
      await baseline.connection.close();
    }
    await retrysafe?.stop();
    await temporal?.close();
    await Promise.all([bank?.close(), reservations?.close()]);
  });

  /** A request of `type` naming accounts and SKUs of this test alone, opened with BALANCE and STOCK. */
  async function prepared(type: string) {
    const definition = builtInCatalog.get(type)!;
    const request = sampleRequest(definition, `fair_${randomUUID().slice(0, 8)}`);
    const resources = resourcesOf(definition, request);
    for (const [account, { currency }] of resources.accounts) await bank.openAccount(account, BALANCE, currency);
    for (const sku of resources.skus.keys()) await reservations.setStock(sku, STOCK);
    return { definition, request, resources };
  }

  /**
   * The baseline for `key`, under a workflow ID of its own: the operation's own ID stays free
   * for retrysafe's workflow (it refuses an ID that has run), while the downstream keys are
   * derived from the tenant and key in the input, as retrysafe derives them.
   */
  function bareHttp(type: string, key: string, request: Record<string, unknown>) {
    const ref = operationRef('default', key);
    const input: BareHttpInput = {
      type,
      tenant: ref.tenant,
      key,
      request,
    };
    return temporal.client.workflow.execute('bareHttp', {
      taskQueue: queues.baseline,
      workflowId: `bare:${ref.workflowId}`,
      args: [input],
    });
  }

  it.each(builtInCatalog.types)(
    '%s: makes each step once under the key retrysafe derives, and retrysafe then finds them all done',
    async (type) => {
      const { definition, request, resources } = await prepared(type);
      const key = `fair-${randomUUID()}`;
      const ref = operationRef('default', key);
      expect(await bareHttp(type, key, request)).toEqual({ ok: true });

      // Every step's effect is in force under `<tenant>/<key>/<suffix>`.
      for (const step of definition.steps) {
        if (!step.effect) continue;
        const dk = downstreamKey(ref.workflowId, step.keySuffix);
        expect(dk).toBe(`default/${key}/${step.keySuffix}`);
        const base = step.service === 'bank' ? bank.url : reservations.url;
        const res = await fetch(`${base}${step.effect.path.replace('{key}', encodeURIComponent(dk))}`);
        expect(res.status, `${step.name} under ${dk}`).toBe(200);
        expect(step.effect.present).toContain(((await res.json()) as { status: string }).status);
      }
      const moved = async () => ({
        accounts: await Promise.all([...resources.accounts.keys()].map(async (a) => Math.abs(BALANCE - (await bank.balance(a))))),
        skus: await Promise.all([...resources.skus.keys()].map(async (s) => STOCK - (await reservations.stock(s)).available)),
      });
      const once = {
        accounts: [...resources.accounts.values()].map((a) => a.amount),
        skus: [...resources.skus.values()],
      };
      expect(await moved()).toEqual(once);

      // retrysafe's own workflow for the same key and request sends the same calls under the
      // same keys: the sandboxes answer each from what they stored, and nothing moves again.
      const outcome = (await temporal.client.workflow.execute(
        type,
        workflowStartOptions(
          definition,
          programFor(definition),
          operationRef('default', key),
          { type, fingerprint: fingerprint(type, request), request },
          SETTINGS,
          queues.retrysafe,
        ),
      )) as OperationOutcome;
      expect(outcome.status).toBe('succeeded');
      expect(await moved()).toEqual(once);

      // Bare: nothing of retrysafe's books, one local activity (a marker) per step.
      const handle = temporal.client.workflow.getHandle(`bare:${ref.workflowId}`);
      expect((await handle.describe()).memo ?? {}).toEqual({});
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.markerRecordedEventAttributes)).toHaveLength(definition.steps.length);
      expect(events.some((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toBe(false);
      expect(events.some((e) => e.workflowPropertiesModifiedEventAttributes)).toBe(false);
      expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
    },
  );

  it('registers no compensation: a refused credit leaves the debit in place (retrysafe would reverse it)', async () => {
    const { request } = await prepared('transfer');
    const key = `fair-${randomUUID()}`;
    const to = `nobody-${randomUUID().slice(0, 8)}`;
    const failed = bareHttp('transfer', key, { ...request, to });
    await expect(failed).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(BALANCE - (await bank.balance(String(request.from)))).toBe(request.amount);
    const debit = await bank.charge(`default/${key}/debit`);
    expect(debit.status).toBe(200);
    expect(debit.body.status).toBe('captured');
  });

  it('fails the workflow, not its task, for a type the registry does not define', async () => {
    const failed = bareHttp('no_such_type', `fair-${randomUUID()}`, {});
    await expect(failed).rejects.toMatchObject({ cause: { message: expect.stringContaining('no_such_type') } });
  });
});
