// Schemathesis (PyPI) for the schema-driven fuzz: installed on first use, pinned, into a
// git-ignored venv under .tools/, so a clean CI machine gets the same version. When pip
// cannot reach PyPI this throws with a clear message: the fuzz fails rather than being
// skipped.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Pinned: the latest release when this was written; it supports Python ≥ 3.10. */
export const SCHEMATHESIS_VERSION = '4.32.5';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VENV = join(ROOT, '.tools', 'schemathesis', `venv-${SCHEMATHESIS_VERSION}`);
const BIN = join(VENV, 'bin', 'schemathesis');

function installedVersion(): string | undefined {
  if (!existsSync(BIN)) return undefined;
  const res = spawnSync(BIN, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  return res.status === 0 ? /version (\S+)/.exec(res.stdout)?.[1] : undefined;
}

function run(cmd: string, args: string[], what: string, timeoutMs: number): void {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  if (res.status === 0) return;
  const output = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
  throw new Error(
    `${what} failed (${res.error?.message ?? `exit ${String(res.status ?? res.signal)}`}).\n` +
      `The schema fuzz needs schemathesis==${SCHEMATHESIS_VERSION} from PyPI in ${VENV}: check that ` +
      `python3 (with venv and pip) is installed and that pip can reach PyPI, or install it there by hand.\n${output}`,
  );
}

/** Path of the pinned schemathesis executable, installing it when missing or broken. */
export function ensureSchemathesis(): string {
  if (installedVersion() === SCHEMATHESIS_VERSION) return BIN;
  // A half-made venv (interrupted install) is rebuilt from scratch.
  rmSync(VENV, { recursive: true, force: true });
  mkdirSync(join(ROOT, '.tools', 'schemathesis'), { recursive: true });
  const python = process.env.PYTHON ?? 'python3';
  console.log(`installing schemathesis==${SCHEMATHESIS_VERSION} from PyPI into ${VENV}…`);
  run(python, ['-m', 'venv', VENV], `${python} -m venv`, 120_000);
  run(
    join(VENV, 'bin', 'python'),
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', `schemathesis==${SCHEMATHESIS_VERSION}`],
    `pip install schemathesis==${SCHEMATHESIS_VERSION}`,
    600_000,
  );
  const version = installedVersion();
  if (version !== SCHEMATHESIS_VERSION) {
    throw new Error(`schemathesis in ${VENV} reports version ${String(version)}, expected ${SCHEMATHESIS_VERSION}`);
  }
  return BIN;
}

export interface FuzzRun {
  exitCode: number | null;
  output: string;
}

/**
 * Runs schemathesis as a child process without blocking this one: the API under test
 * lives in the same process and must keep answering.
 */
export function runSchemathesis(bin: string, args: string[], timeoutMs: number, cwd: string): Promise<FuzzRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      // Its crash cache (.schemathesis/) goes there, not into the work tree.
      cwd,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`schemathesis did not finish within ${timeoutMs} ms:\n${output.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output });
    });
  });
}
