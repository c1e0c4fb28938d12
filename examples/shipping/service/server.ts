// Entry point of the example shipping service: `npx tsx examples/shipping/service/server.ts`
// (settings in config.ts). It opens its SQLite file, listens, and stops cleanly on SIGTERM.
import { runSandbox } from 'retrysafe-server/keyed-service';
import { buildApp } from './app.js';
import { loadShippingConfig } from './config.js';

runSandbox('shipping', () => loadShippingConfig(), buildApp);
