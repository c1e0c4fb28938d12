// Installs the peers' own dependencies (Restate's server and SDK, DBOS Transact) into
// tools/bench/peers/node_modules, only when the bench asks for the peers: users of retrysafe
// never download them. Idempotent: nothing runs while package-lock.json is unchanged
// since the last install (a stamp holds its hash), as tools/bootstrap.mjs does for the root.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEERS_DIR } from './index.js';

const STAMP = join(PEERS_DIR, 'node_modules', '.retrysafe-peers-install-stamp');

export function ensurePeersInstalled(log: (line: string) => void = console.log): void {
  const lockHash = createHash('sha256')
    .update(readFileSync(join(PEERS_DIR, 'package-lock.json')))
    .digest('hex');
  const installed = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : '';
  if (installed === lockHash) return;
  // A first install takes the exact lock (npm ci); an existing tree is updated in place.
  const command = existsSync(join(PEERS_DIR, 'node_modules')) ? 'install' : 'ci';
  log(`peers: installing their npm dependencies into tools/bench/peers (npm ${command})…`);
  const res = spawnSync('npm', [command, '--no-audit', '--no-fund'], { cwd: PEERS_DIR, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`npm ${command} in ${PEERS_DIR} failed (${res.status ?? res.signal})`);
  writeFileSync(STAMP, lockHash + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) ensurePeersInstalled();
