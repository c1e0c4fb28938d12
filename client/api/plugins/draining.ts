// A request on a kept-alive connection while this instance closes starts nothing and tells
// the client to come back (to this instance's successor or another one), and every POST
// still waiting for an outcome answers at once instead of holding the close.
import type { ApiInstance } from '../instance.js';
import { problems } from '../problems.js';

export function installDraining(app: ApiInstance, endWaits: () => void): void {
  let closing = false;
  app.addHook('onRequest', async () => {
    if (closing) throw problems.shuttingDown();
  });
  app.addHook('preClose', async () => {
    closing = true;
    endWaits();
  });
}
