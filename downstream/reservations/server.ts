// Entry point of the sandbox reservation service: `npx tsx downstream/reservations/server.ts`.
import { createLogger } from '../../common/logger.js';
import { openDatabase } from '../shared/db.js';
import { buildApp } from './app.js';
import { loadReservationsConfig } from './config.js';

async function run(): Promise<void> {
  const config = loadReservationsConfig();
  const logger = createLogger('reservations', { level: config.logLevel });
  const db = openDatabase(config.dbPath);
  const app = buildApp({ db, faults: config.faults, keyTtlMs: config.keyTtlMs, logger, seed: true });
  if (config.faults) logger.warn('fault injection enabled (SANDBOX_FAULTS): PUT /_faults changes them');

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'reservations stopping');
    app
      .close()
      .then(() => db.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'reservations did not stop cleanly');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  await app.listen({
    port: config.port,
    host: config.host,
    listenTextResolver: (url) => `reservations listening at ${url}`,
  });
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
