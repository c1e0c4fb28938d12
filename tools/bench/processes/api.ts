// The HTTP API as the bench runs it: the real buildApp and loadApiConfig (so every
// RETRYSAFE_* variable means what it means in production), plus a gRPC interceptor that
// counts the Temporal calls the API makes, read by the bench at GET /_bench/rpcs.
import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
} from '@temporalio/client';
import { buildApp } from '../../../client/api/app.js';
import { loadApiConfig } from '../../../client/api/config.js';
import { createLogger } from '../../../common/logger.js';
import { loadTemporalSettings } from '../../../common/temporal.js';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

async function run(): Promise<void> {
  const config = loadApiConfig();
  const temporal = loadTemporalSettings();
  const logger = createLogger('api', { level: config.logLevel });

  const rpcs = new Map<string, number>();
  // Counts each call once, before the retry interceptor (a retried call is one call).
  const counting: Interceptor = (options, nextCall) => {
    const method = options.method_definition.path.split('/').pop() ?? '?';
    rpcs.set(method, (rpcs.get(method) ?? 0) + 1);
    return nextCall(options) as ReturnType<Interceptor>;
  };
  const connection = await Connection.connect({
    ...temporal.connectionOptions,
    interceptors: [counting, makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  });
  const client = new Client({ connection, namespace: temporal.namespace });
  const app = buildApp({ config, client, namespace: temporal.namespace, logger });
  app.get('/_bench/rpcs', { schema: { hide: true } }, async () => Object.fromEntries(rpcs));

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await app.close();
      await connection.close();
    } finally {
      // A normal exit, so that --cpu-prof writes its profile.
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  await app.listen({ host: config.host, port: config.port });
  console.log(`bench api listening on ${config.port}`);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
