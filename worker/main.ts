// Worker entry point: parse config, load the operations (built-in and RETRYSAFE_OPERATIONS),
// connect, run until SIGINT/SIGTERM (the SDK drains in-flight tasks on shutdown).
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
import { checkOpenOperations, definitionProblems } from './start-checks.js';

async function run(): Promise<void> {
  // A span per step, compensation and webhook delivery, in the trace each operation carries.
  await startTracing('worker');
  const config = loadWorkerConfig();
  const temporal = loadTemporalSettings();
  const logger = createLogger('worker', { level: config.LOG_LEVEL });
  const { catalog: registry, modules } = await loadOperations(builtInCatalog);
  const operationActivities = await loadOperationActivities(modules);
  // A call to a service this worker cannot reach, or to an activity it lacks, would only fail
  // at run time, retried until its step is fenced: refuse to start instead.
  const has = { services: [...config.services.keys()], activities: stepActivityNames(operationActivities) };
  const problems = definitionProblems(registry, has);
  if (problems.length > 0) throw new ConfigError(problems);
  await checkOpenOperations(temporal.connectionOptions, temporal.namespace, config.RETRYSAFE_TASK_QUEUE, has, registry, (m) =>
    logger.warn(m),
  );

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
  });
  logger.info(
    {
      taskQueue: config.RETRYSAFE_TASK_QUEUE,
      namespace: temporal.namespace,
      address: temporal.address,
      webhookTenants: [...config.webhooks.urls.keys()],
      operations: registry.types,
    },
    'worker ready',
  );
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
