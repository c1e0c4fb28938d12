// The DBOS peer: DBOS Transact in this process, its system database in PostgreSQL, behind
// retrysafe's checkout contract (../edge.ts). The workflow ID is `<tenant>/<key>`, so a
// retry of the key starts the same ID and DBOS answers with the stored outcome.
//
// Settings: DBOS_SYSTEM_DATABASE_URL, DBOS_POOL_SIZE (system database connections),
// PEER_HOST/PEER_PORT, BANK_URL, RESERVATIONS_URL, DOWNSTREAM_TIMEOUT_MS, LOG_LEVEL.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { checkoutKeys } from '../contract.js';
import { sandboxClients, sandboxUrlsFromEnv } from '../downstream.js';
import { buildEdge, exitOnSignal, listenEdge } from '../edge.js';
import { registerCheckout } from './checkout.js';

async function run(): Promise<void> {
  const env = process.env;
  const systemDatabaseUrl = env.DBOS_SYSTEM_DATABASE_URL;
  if (!systemDatabaseUrl) throw new Error('DBOS_SYSTEM_DATABASE_URL is not set');
  const poolSize = env.DBOS_POOL_SIZE ? Number(env.DBOS_POOL_SIZE) : undefined;

  DBOS.setConfig({
    name: 'retrysafe-peer-checkout',
    systemDatabaseUrl,
    ...(poolSize ? { systemDatabasePoolSize: poolSize } : {}),
    logLevel: env.LOG_LEVEL ?? 'info',
  });
  const checkout = registerCheckout(sandboxClients(sandboxUrlsFromEnv()));
  await DBOS.launch();

  const app = buildEdge(async (id, request) => {
    const handle = await DBOS.startWorkflow(checkout, { workflowID: id })({ keys: checkoutKeys(id), request });
    return handle.getResult();
  });
  exitOnSignal(() => app.close().then(() => DBOS.shutdown()));
  await listenEdge(app, 'dbos');
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
