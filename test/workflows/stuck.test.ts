// Nothing hangs silently: an operation whose workflow tasks keep failing shows
// needsAttention with the engine's reason, in its resource and in the list, and the API's
// retrysafe_operations_stuck counts it. Two ways to make the tasks fail, both real:
//
// - a history that no longer matches the code (an operation started before operations
//   carried their program, whose definition changed under it: the issue this version fixes);
// - a workflow type no definition of the worker's has.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { quietLogger } from '../../tools/quiet-logger.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { workflowBundleOptions } from '../../worker/bundle.js';
import { createWorker } from '../../worker/create.js';
import { SearchAttributes } from '../../workflows/contracts.js';
import { operationRef } from '../../workflows/identity.js';
import { startApi, type ApiHandle } from '../support/api.js';
import { scrape, sample } from '../support/metrics.js';
import { startBank, uniqueId, type BankHandle } from '../support/stack.js';
import { writeParcelFolder } from './parcel-folder.js';
import { pendingActivity } from './wait-for.js';

const root = mkdtempSync(join(tmpdir(), 'retrysafe-stuck-'));
let bank: BankHandle;
let api: ApiHandle;
let client: Client;
let connection: Connection;
const taskQueue = uniqueId('stuck');
let closedUrl = '';
/** A tenant of its own, so its list holds only this file's operations. */
const TENANT = uniqueId('stuck');
const SECRET = 'sk_stuck_0123456789abcdef';
const auth = { headers: { authorization: `Bearer ${SECRET}` } };

async function bundleOf(name: string, withShipment: boolean) {
  const dir = writeParcelFolder(join(root, name), withShipment);
  const { modules } = await loadOperations(builtInCatalog, { RETRYSAFE_OPERATIONS: dir });
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(modules, join(root, `${name}-cache`)),
    logger: quietLogger('error'),
  });
  return code;
}

async function workerOn(code: string) {
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    connection: native,
    namespace: 'default',
    taskQueue,
    services: new Map([
      ['bank', bank.url],
      // Nothing listens there: the shipment is retried until the test changes the definition.
      ['shipping', closedUrl],
    ]),
    downstreamTimeoutMs: 1_000,
    workflowBundle: { code },
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await native.close();
    },
  };
}

beforeAll(async () => {
  closedUrl = `http://127.0.0.1:${await freePort()}`;
  bank = await startBank();
  api = await startApi({ taskQueue, apiKeys: `${SECRET}=${TENANT}` });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: 'default' });
});

afterAll(async () => {
  await api?.close();
  await bank?.close();
  await connection?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Starts an operation as the API did before operations carried their program (no program in its input). */
async function startLegacy(type: string, key: string, request: Record<string, unknown>) {
  const ref = operationRef(TENANT, key);
  return client.workflow.start(type, {
    taskQueue,
    workflowId: ref.workflowId,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [{ tenant: ref.tenant, key, request, settings: { stepDeadlineMs: 600_000, attentionAfterMs: 300_000 } }],
    memo: { type, tenant: ref.tenant, key, fingerprint: 'f'.repeat(64), request },
    typedSearchAttributes: [
      { key: SearchAttributes.OperationType, value: type },
      { key: SearchAttributes.OperationStatus, value: 'processing' },
      { key: SearchAttributes.Tenant, value: ref.tenant },
      { key: SearchAttributes.NeedsAttention, value: false },
    ],
  });
}

/** The operation's resource once it says it needs attention (or the last one read, after `timeoutMs`). */
async function untilFlagged(key: string, timeoutMs: number) {
  let body: Record<string, unknown> = {};
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(500)) {
    body = (await api.request('GET', `/v1/operations/${encodeURIComponent(key)}`, auth)).body;
    if (body.needsAttention === true) break;
  }
  return body;
}

describe('an operation whose workflow tasks keep failing', () => {
  it('after its definition changed under it (a non-determinism error): needsAttention with the reason, listed and counted', async () => {
    const [before, after] = [await bundleOf('before', true), await bundleOf('after', false)];
    const account = await bank.newAccount(10_000);
    const key = uniqueId('parcel');
    const handle = await startLegacy('parcel', key, { account, amount: 100, currency: 'EUR' });
    const first = await workerOn(before);
    try {
      // Charged, and waiting on the shipment: the history holds both steps.
      await pendingActivity(handle, 'callService');
    } finally {
      await first.stop();
    }
    const second = await workerOn(after);
    // The shipping service comes back: the shipment completes, and its workflow task replays a
    // history the changed definition no longer matches.
    const shipping = createServer((_req, res) =>
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"shp_1"}'),
    );
    await new Promise<void>((resolve) => shipping.listen(Number(new URL(closedUrl).port), '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const flagged = await untilFlagged(key, 60_000);
      expect(flagged, JSON.stringify(flagged)).toMatchObject({ status: 'processing', needsAttention: true });
      expect(String(flagged.attentionReason)).toMatch(/^its workflow tasks keep failing.*Nondeterminism/);
      expect(Date.now() - started).toBeLessThan(60_000);
      // The engine's own report reaches the list and the metric after a few more failures.
      let row: Record<string, unknown> | undefined;
      let stuck = 0;
      for (
        const deadline = Date.now() + 90_000;
        Date.now() < deadline && !(row?.needsAttention && stuck > 0);
        await sleep(1_000)
      ) {
        const list = (await api.request('GET', '/v1/operations?status=processing', auth)).body;
        row = (list.operations as Array<Record<string, unknown>>).find((o) => o.key === key);
        stuck = sample(await scrape(`${api.url}/metrics`), 'retrysafe_operations_stuck');
      }
      expect(row).toMatchObject({ needsAttention: true, attentionReason: expect.stringMatching(/NonDeterministicError/) });
      expect(stuck).toBeGreaterThanOrEqual(1);
    } finally {
      shipping.close();
      await second.stop();
      await handle.terminate('test over');
    }
  });

  it('of a type no definition of the worker has: needsAttention, naming the type', async () => {
    const code = await bundleOf('after', false);
    const key = uniqueId('ghost');
    const handle = await startLegacy('ghost', key, {});
    const worker = await workerOn(code);
    try {
      const flagged = await untilFlagged(key, 60_000);
      expect(flagged).toMatchObject({ needsAttention: true });
      expect(String(flagged.attentionReason)).toContain('no operation is defined for workflow type ghost');
    } finally {
      await worker.stop();
      await handle.terminate('test over');
    }
  });
});
