// Entry point of the HTTP API: parse config, wire, listen, stop cleanly on SIGTERM/SIGINT.
// The Temporal connection is lazy so the API starts (and answers 503 engine_unavailable,
// /readyz 503) while Temporal is still down, instead of crashing in a restart loop.
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../common/logger.js';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { loadTemporalSettings } from '../../common/temporal.js';
import { startTracing, stopTracing } from '../../common/tracing/start.js';
import { buildApp } from './app.js';
import { loadApiConfig } from './config.js';
import { engineRetryInterceptor } from './engine-errors.js';

async function run(): Promise<void> {
  // Tenants' requests arrive here: their traceparent may parent a span, never sample it.
  await startTracing('api', { edge: true });
  const config = loadApiConfig();
  const temporal = loadTemporalSettings();
  const logger = createLogger('api', { level: config.logLevel });
  const { catalog: operations } = await loadOperations(builtInCatalog);

  const connection = Connection.lazy({ ...temporal.connectionOptions, interceptors: [engineRetryInterceptor()] });
  const client = new Client({ connection, namespace: temporal.namespace });
  const app = buildApp({ config, client, namespace: temporal.namespace, logger, operations });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping');
    try {
      await app.close();
      await connection.close();
      await stopTracing();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  const address = await app.listen({ host: config.host, port: config.port });
  logger.info(
    { url: address, temporal: temporal.address, namespace: temporal.namespace, operations: operations.types },
    'api listening',
  );
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
