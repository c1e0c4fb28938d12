// The workflow bundle with operations from outside: its definitions are registered once per
// V8 context (preloaded with the catalog, which every execution shares), so one worker runs
// execution after execution of the generic workflow without registering them again. Replay
// runs them in one worker, in one context, as a live worker does.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { quietLogger } from '../../tools/quiet-logger.js';
import { workflowBundleOptions } from '../../worker/bundle.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'retrysafe-bundle-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

describe('a workflow bundle with operations from outside', () => {
  it('runs several executions in one worker: the outside definitions are registered once, beside the shared catalog', async () => {
    const { modules, catalog } = await loadOperations(builtInCatalog, {
      RETRYSAFE_OPERATIONS: new URL('./outside', import.meta.url).pathname,
    });
    expect(catalog.has('ping')).toBe(true);
    const options = workflowBundleOptions(modules, cacheDir);
    const { code } = await bundleWorkflowCode({ ...options, logger: quietLogger('error') });
    const files = [
      'v4-payment-succeeded.json',
      'v4-checkout-succeeded.json',
      'v4-transfer-succeeded.json',
      'v4-payment-fenced.json',
    ];
    async function* histories() {
      for (const file of files) {
        const history = JSON.parse(readFileSync(new URL(`../histories/${file}`, import.meta.url), 'utf8'));
        yield { workflowId: file, history };
      }
    }
    const results: Array<[string, string]> = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories())) {
      results.push([result.workflowId, result.error ? String(result.error) : 'replayed']);
    }
    expect(results).toEqual(files.map((file) => [file, 'replayed']));
  });
});
