// One peer and the sandboxes on loopback, for trying it by hand:
//
//   npx tsx tools/bench/peers/try.ts --peer restate|dbos [--for 600s] [--keep]
//
// It prints the URLs and a curl for a checkout, then runs until Ctrl-C or until --for
// (seconds, default 600) has passed, and stops everything. Data in .data/peers-try-*.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PEER_NAMES, PEERS_DIR, type PeerName } from './index.js';
import { startLocal } from './local.js';

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: { peer: { type: 'string' }, for: { type: 'string', default: '600' }, keep: { type: 'boolean', default: false } },
  });
  const peer = values.peer as PeerName;
  if (!PEER_NAMES.includes(peer)) throw new Error(`--peer must be one of ${PEER_NAMES.join(', ')}`);
  const dataDir = join(PEERS_DIR, '..', '..', '.data', `peers-try-${peer}-${Date.now()}`);
  const local = await startLocal(peer, { dataDir, logLevel: 'info' });
  const { stack, bank, reservations } = local;
  const body = (account: string, amount: number) =>
    JSON.stringify({ account, amount, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 2 }] });
  console.log(`
${peer} is up (${stack.durability.join('; ')})
  checkout   POST ${stack.checkoutUrl}
  bank       ${bank}   (GET /accounts/acc_bob, GET /charges/default%2F<key>%2Fcharge)
  stock      ${reservations}   (GET /inventory/sku_book, GET /reservations/default%2F<key>%2Freserve)
  processes  ${local.processes.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}

  curl -s -X POST ${stack.checkoutUrl} -H 'Idempotency-Key: order-1' -H 'Content-Type: application/json' -d '${body('acc_alice', 4200)}'
  curl -s -X POST ${stack.checkoutUrl} -H 'Idempotency-Key: bob-1' -H 'Content-Type: application/json' -d '${body('acc_bob', 4200)}'
`);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Number(values.for) * 1000);
    const stop = () => (clearTimeout(timer), resolve());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await local.stop();
  if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
