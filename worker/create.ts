// Builds a worker for the retrysafe task queue: the workflows in workflows/ and the
// activities wired to real downstream clients (and, when configured, the completion
// webhooks' URLs and secret). Shared by worker/main.ts and the tests.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { createBankClient } from '../activities/bank.js';
import { createReservationsClient } from '../activities/reservations.js';
import { codePath, PACKAGE_ROOT } from '../common/code-path.js';
import { WEBHOOK_TIMEOUT_MS, type WorkerWebhooks } from './config.js';

export const WORKFLOWS_PATH = codePath('workflows/index.ts');
/** Bundled with the workflows as interceptor modules: the saga reads a cancel request's reason there. */
export const WORKFLOW_INTERCEPTOR_MODULES = [codePath('workflows/cancellation.ts')];
/** How every bundle of the workflows is made (worker, tests, bench): the same code everywhere. */
export const WORKFLOW_BUNDLE_OPTIONS = {
  workflowsPath: WORKFLOWS_PATH,
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
};
const WORKFLOWS_DIR = codePath('workflows/');
/** Where prebuilt workflow bundles are kept, by content hash (the usual home of tool caches). */
export const BUNDLE_CACHE_DIR = join(PACKAGE_ROOT, 'node_modules', '.cache', 'retrysafe');

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  bankUrl: string;
  reservationsUrl: string;
  downstreamTimeoutMs: number;
  /** Completion webhooks (tenants' URLs and the signing secret); none when absent or empty. */
  webhooks?: WorkerWebhooks;
  /** A prebuilt bundle (bundleWorkflowCode) saves the webpack step, e.g. in tests. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Without `workflowBundle`: where the bundle built from workflows/ is cached, keyed by a
   * hash of its sources and the SDK version, so a restart skips webpack (null: no cache).
   */
  bundleCacheDir?: string | null;
  /** Extra worker options (tuning, identity). */
  options?: Partial<WorkerOptions>;
}

function sdkVersion(pkg: string): string {
  const require = createRequire(import.meta.url);
  try {
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** What the bundle is made of: every file under workflows/ and the SDK that bundles and runs it. */
function workflowSourceHash(): string {
  const hash = createHash('sha256');
  for (const pkg of ['@temporalio/worker', '@temporalio/workflow', '@temporalio/common'])
    hash.update(`${pkg}@${sdkVersion(pkg)}\n`);
  const files = readdirSync(WORKFLOWS_DIR, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of files)
    hash
      .update(`${file.slice(WORKFLOWS_DIR.length)}\n`)
      .update(readFileSync(file))
      .update('\n');
  return hash.digest('hex').slice(0, 20);
}

/** The cache file of the bundle of the current workflow sources. */
export function workflowBundleCachePath(cacheDir: string = BUNDLE_CACHE_DIR): string {
  return join(cacheDir, `workflow-bundle-${workflowSourceHash()}.js`);
}

/**
 * The workflow bundle, built once per version of the workflow sources: webpack takes
 * seconds (much more on a busy machine), and a worker restart should not wait for it.
 * An unwritable cache only costs the build.
 */
export async function cachedWorkflowBundle(cacheDir: string): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  const codePath = workflowBundleCachePath(cacheDir);
  if (existsSync(codePath)) return { codePath };
  const { code } = await bundleWorkflowCode(WORKFLOW_BUNDLE_OPTIONS);
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed, so a worker starting at the same time never reads half a file.
    const partial = `${codePath}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, codePath);
    return { codePath };
  } catch {
    return { code };
  }
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const activities = createActivities({
    bank: createBankClient({ baseUrl: opts.bankUrl, timeoutMs: opts.downstreamTimeoutMs }),
    reservations: createReservationsClient({ baseUrl: opts.reservationsUrl, timeoutMs: opts.downstreamTimeoutMs }),
    ...(opts.webhooks?.secret && opts.webhooks.urls.size > 0
      ? { webhooks: { urls: opts.webhooks.urls, secret: opts.webhooks.secret, timeoutMs: WEBHOOK_TIMEOUT_MS } }
      : {}),
  });
  const cacheDir = opts.bundleCacheDir === undefined ? BUNDLE_CACHE_DIR : opts.bundleCacheDir;
  const workflows = opts.workflowBundle
    ? { workflowBundle: opts.workflowBundle }
    : cacheDir
      ? { workflowBundle: await cachedWorkflowBundle(cacheDir) }
      : { workflowsPath: WORKFLOWS_PATH };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities,
    ...workflows,
    ...opts.options,
    interceptors: { ...opts.options?.interceptors, workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
  });
}
