// Worker entry point: parse config, load the operations (built-in and RETRYSAFE_OPERATIONS),
// connect, run until SIGINT/SIGTERM (the SDK drains in-flight tasks on shutdown). With
// RETRYSAFE_DEPLOYMENT_NAME it runs as one build of that Worker Deployment (versioning.ts).
import { NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { ConfigError } from '../common/env.js';
import { createLogger } from '../common/logger.js';
import { loadOperationActivities, loadOperations } from '../common/definition-folders.js';
import { builtInCatalog } from '../workflows/catalog.js';
import { loadTemporalSettings } from '../common/temporal.js';
import { stepActivityNames } from '../activities/index.js';
import { startTracing, stopTracing } from '../common/tracing/start.js';
import { loadWorkerConfig } from './config.js';
import { createWorker, runUntilShutdown } from './create.js';
import { workflowSourceHash } from './bundle.js';
import { checkOpenOperations, definitionProblems } from './start-checks.js';
import { routingNote, routingOf, type DeploymentVersion } from './versioning.js';

type Logger = ReturnType<typeof createLogger>;
type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

/** The definitions and their activities, checked against what this worker has before it polls anything. */
async function loadCheckedOperations(config: WorkerConfig, temporal: ReturnType<typeof loadTemporalSettings>, logger: Logger) {
  const { catalog, modules } = await loadOperations(builtInCatalog);
  const operationActivities = await loadOperationActivities(modules);
  // A call to a service this worker cannot reach, or to an activity it lacks, would only fail
  // at run time, retried until its step is fenced: refuse to start instead.
  const has = { services: [...config.services.keys()], activities: stepActivityNames(operationActivities) };
  const problems = definitionProblems(catalog, has);
  if (problems.length > 0) throw new ConfigError(problems);
  // Versioned, the build ID defaults to the bundle's content hash: a new interpreter is a new build by itself.
  const deployment = config.versioning && {
    deploymentName: config.versioning.deploymentName,
    buildId: config.versioning.buildId ?? workflowSourceHash(modules),
  };
  await checkOpenOperations(
    { connection: temporal.connectionOptions, namespace: temporal.namespace, taskQueue: config.RETRYSAFE_TASK_QUEUE },
    { has, catalog, ...(deployment ? { deployment } : {}) },
    (m) => logger.warn(m),
  );
  return { catalog, modules, operationActivities, deployment: deployment || undefined };
}

/** The SDK's own logs through ours, and its metrics where configured. */
function installRuntime(config: WorkerConfig, logger: Logger): void {
  Runtime.install({
    logger: {
      log: (level, message, meta) => logger[level.toLowerCase() as 'info'](meta ?? {}, message),
      trace: (m, meta) => logger.trace(meta ?? {}, m),
      debug: (m, meta) => logger.debug(meta ?? {}, m),
      info: (m, meta) => logger.info(meta ?? {}, m),
      warn: (m, meta) => logger.warn(meta ?? {}, m),
      error: (m, meta) => logger.error(meta ?? {}, m),
    },
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(config.WORKER_METRICS_ADDRESS === 'off'
        ? {}
        : { metrics: { prometheus: { bindAddress: config.WORKER_METRICS_ADDRESS } } }),
    },
  });
}

/** Advice only: a versioned worker whose build is not where new operations go says so; one that cannot read the routing still runs. */
async function warnOnRouting(connection: NativeConnection, namespace: string, deployment: DeploymentVersion, logger: Logger) {
  const fields = { deployment: deployment.deploymentName, buildId: deployment.buildId };
  await routingOf(connection.workflowService, namespace, deployment.deploymentName).then(
    (routing) => {
      const note = routingNote(deployment, routing);
      if (note) logger.warn(fields, note);
    },
    (err: unknown) => logger.warn({ ...fields, err }, "could not read the deployment's routing"),
  );
}

async function run(): Promise<void> {
  // A span per step, compensation and webhook delivery, in the trace each operation carries.
  await startTracing('worker');
  const config = loadWorkerConfig();
  const temporal = loadTemporalSettings();
  const logger = createLogger('worker', { level: config.LOG_LEVEL });
  const { catalog, modules, operationActivities, deployment } = await loadCheckedOperations(config, temporal, logger);
  installRuntime(config, logger);

  const connection = await NativeConnection.connect(temporal.nativeConnectionOptions);
  const worker = await createWorker({
    connection,
    namespace: temporal.namespace,
    taskQueue: config.RETRYSAFE_TASK_QUEUE,
    downstreamTimeoutMs: config.DOWNSTREAM_TIMEOUT,
    webhooks: config.webhooks,
    services: config.services,
    operationModules: modules,
    operationActivities,
    ...(deployment ? { deployment } : {}),
  });
  logger.info(
    {
      taskQueue: config.RETRYSAFE_TASK_QUEUE,
      namespace: temporal.namespace,
      address: temporal.address,
      webhookTenants: [...config.webhooks.urls.keys()],
      operations: catalog.types,
      deployment: deployment?.deploymentName ?? null,
      buildId: deployment?.buildId ?? null,
      versioning: deployment ? 'pinned' : 'off',
    },
    'worker ready',
  );
  if (deployment) await warnOnRouting(connection, temporal.namespace, deployment, logger);
  try {
    await runUntilShutdown(worker, connection);
  } finally {
    await stopTracing();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
