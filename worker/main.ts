// Worker entry point: parse config, connect, run until SIGINT/SIGTERM (the SDK drains
// in-flight tasks on shutdown).
import { NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { createLogger } from '../common/logger.js';
import { loadTemporalSettings } from '../common/temporal.js';
import { loadWorkerConfig } from './config.js';
import { createWorker } from './create.js';

async function run(): Promise<void> {
  const config = loadWorkerConfig();
  const temporal = loadTemporalSettings();
  const logger = createLogger('worker', { level: config.LOG_LEVEL });

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
    bankUrl: config.BANK_URL,
    reservationsUrl: config.RESERVATIONS_URL,
    downstreamTimeoutMs: config.DOWNSTREAM_TIMEOUT,
    webhooks: config.webhooks,
  });
  logger.info(
    {
      taskQueue: config.RETRYSAFE_TASK_QUEUE,
      namespace: temporal.namespace,
      address: temporal.address,
      webhookTenants: [...config.webhooks.urls.keys()],
    },
    'worker ready',
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
