#!/usr/bin/env node
// Idempotent set-up shared by `npm start` and `npm test`: installs the npm dependencies
// when package-lock.json changed since the last install, then makes sure the pinned
// Temporal CLI is present. Plain Node on purpose: it runs before node_modules exists.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const stamp = join(root, 'node_modules', '.retrysafe-install-stamp');

function run(cmd, args) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) {
    console.error(`retrysafe setup: '${cmd} ${args.join(' ')}' failed (exit ${res.status ?? res.signal})`);
    process.exit(1);
  }
}

const lockHash = createHash('sha256').update(readFileSync(lock)).digest('hex');
const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
if (installed !== lockHash) {
  // A clean checkout gets the exact lock (npm ci); an existing tree is updated in place,
  // which is much faster than ci's delete-and-reinstall.
  const fresh = !existsSync(join(root, 'node_modules'));
  console.log(`retrysafe setup: installing npm dependencies (npm ${fresh ? 'ci' : 'install'})…`);
  run('npm', [fresh ? 'ci' : 'install', '--no-audit', '--no-fund']);
  writeFileSync(stamp, lockHash + '\n');
}

run(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'tools', 'temporal-cli.ts'), '--ensure']);
