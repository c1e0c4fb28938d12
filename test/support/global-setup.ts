// Starts one real Temporal dev server (SQLite file, like `npm start`) for the whole test
// run, its namespace prepared as the launcher prepares it, and bundles the workflows once
// so each test's worker skips webpack.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startDevServer, type DevServer } from '../../tools/dev-server.js';
import { quietLogger } from '../../tools/quiet-logger.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { ensureTemporalCli } from '../../tools/temporal-cli.js';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../worker/create.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalUiUrl: string;
    temporalCli: string;
    workflowBundlePath: string;
    tmpRoot: string;
  }
}

let server: DevServer | undefined;
let tmpRoot: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  tmpRoot = mkdtempSync(join(tmpdir(), 'retrysafe-test-'));
  const bin = ensureTemporalCli();
  const [port, uiPort] = [await freePort(), await freePort()];
  const [started, bundle] = await Promise.all([
    startDevServer({ bin, dbFile: join(tmpRoot, 'temporal.db'), port, uiPort, logLevel: 'error', retentionMs: 24 * 3600_000 }),
    bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quietLogger() }),
  ]);
  server = started;
  const workflowBundlePath = join(tmpRoot, 'workflow-bundle.js');
  writeFileSync(workflowBundlePath, bundle.code);
  project.provide('temporalAddress', server.address);
  project.provide('temporalUiUrl', server.uiUrl ?? '');
  project.provide('temporalCli', bin);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('tmpRoot', tmpRoot);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (tmpRoot && !process.env.RETRYSAFE_KEEP_TEST_DATA) rmSync(tmpRoot, { recursive: true, force: true });
}
