// Builds a worker for the retrysafe task queue: the workflows (bundle.ts) and the
// activities wired to real downstream clients (and, when configured, the completion
// webhooks' URLs and secret, and the activities of operations loaded from outside).
// Shared by worker/main.ts, the tests and the bench, with how an entry point runs it.
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { StepActivity } from '../activities/steps.js';
import { traceLogAttributes } from '../activities/tracing.js';
import { activeTracing } from '../common/tracing/start.js';
import type { OperationModule } from '../common/definition-folders.js';
import { BUNDLE_CACHE_DIR, cachedWorkflowBundle, workflowBundleOptions } from './bundle.js';
import { WEBHOOK_TIMEOUT_MS, type WorkerWebhooks } from './config.js';
import { deploymentOptions, type DeploymentVersion } from './versioning.js';

export { BUNDLE_CACHE_DIR, WORKFLOW_BUNDLE_OPTIONS, WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './bundle.js';
export { cachedWorkflowBundle, workflowBundleCachePath } from './bundle.js';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  downstreamTimeoutMs: number;
  /** Base URL of every service declared calls name (worker/config.ts serviceUrls). */
  services: ReadonlyMap<string, string>;
  /** Folders of operations from outside (RETRYSAFE_OPERATIONS): bundled, and their activities registered. */
  operationModules?: readonly OperationModule[];
  /** The hand-written activities those folders bring. */
  operationActivities?: Record<string, StepActivity>;
  /** Completion webhooks (tenants' URLs and signing secrets); none when absent or empty. */
  webhooks?: WorkerWebhooks;
  /** A prebuilt bundle (bundleWorkflowCode) saves the webpack step, e.g. in tests. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Without `workflowBundle`: where the bundle built from workflows/ (and outside operations)
   * is cached, keyed by a hash of its sources and the SDK version, so a restart skips
   * webpack (null: no cache).
   */
  bundleCacheDir?: string | null;
  /** A version of a Worker Deployment: its operations stay pinned to this build (versioning.ts). Unset: unversioned. */
  deployment?: DeploymentVersion;
  /** Extra worker options (tuning, identity). */
  options?: Partial<WorkerOptions>;
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const modules = opts.operationModules ?? [];
  const activities = createActivities({
    services: { urls: opts.services, timeoutMs: opts.downstreamTimeoutMs },
    ...(opts.operationActivities ? { stepActivities: opts.operationActivities } : {}),
    ...(opts.webhooks && opts.webhooks.urls.size > 0 ? { webhooks: { ...opts.webhooks, timeoutMs: WEBHOOK_TIMEOUT_MS } } : {}),
  });
  const cacheDir = opts.bundleCacheDir === undefined ? BUNDLE_CACHE_DIR : opts.bundleCacheDir;
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'interceptors'> =
    opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : cacheDir
        ? { workflowBundle: await cachedWorkflowBundle(cacheDir, modules) }
        : bundleOptionsForWorker(workflowBundleOptions(modules));
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities,
    ...workflows,
    ...(opts.deployment ? { workerDeploymentOptions: deploymentOptions(opts.deployment) } : {}),
    ...opts.options,
    // A prebuilt bundle carries its interceptor modules; the worker takes them only when it bundles by itself.
    interceptors: {
      ...opts.options?.interceptors,
      ...workflows.interceptors,
      // With tracing on, activity log lines carry their span (no workflow interceptor: history is untouched).
      ...(activeTracing() ? { activity: [...(opts.options?.interceptors?.activity ?? []), traceLogAttributes] } : {}),
    },
  });
}

/** Bundle options as Worker.create takes them when it bundles by itself. */
function bundleOptionsForWorker(options: ReturnType<typeof workflowBundleOptions>) {
  return {
    workflowsPath: options.workflowsPath,
    interceptors: { workflowModules: options.workflowInterceptorModules ?? [] },
    bundlerOptions: {
      ...(options.preloadModules ? { preloadModules: options.preloadModules } : {}),
      ...(options.webpackConfigHook ? { webpackConfigHook: options.webpackConfigHook } : {}),
    },
  };
}

/**
 * Runs a worker until it shuts down (a signal, or `worker.shutdown()`), then closes its
 * connection: the entry points' last step.
 */
export async function runUntilShutdown(worker: Worker, connection: NativeConnection): Promise<void> {
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}
