// A Python tool from PyPI that a suite runs (schemathesis, openapi-python-client): installed
// on first use, pinned, into a git-ignored venv of its own under .tools/, so a clean CI
// machine gets the same version. When pip cannot reach PyPI this throws with a clear
// message: the suite fails rather than being skipped.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface PythonTool {
  /** The PyPI package, which is also the name of its executable. */
  name: string;
  version: string;
  /** What needs it, for the message when it cannot be installed. */
  neededBy: string;
}

export interface InstalledTool {
  /** The tool's executable. */
  bin: string;
  /** The venv's python, which can import the tool's dependencies. */
  python: string;
}

function venvOf(tool: PythonTool): string {
  return join(ROOT, '.tools', tool.name, `venv-${tool.version}`);
}

function installedVersion(bin: string): string | undefined {
  if (!existsSync(bin)) return undefined;
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  return res.status === 0 ? /version:? (\S+)/.exec(res.stdout)?.[1] : undefined;
}

function run(tool: PythonTool, cmd: string, args: string[], what: string, timeoutMs: number): void {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  if (res.status === 0) return;
  const output = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
  throw new Error(
    `${what} failed (${res.error?.message ?? `exit ${String(res.status ?? res.signal)}`}).\n` +
      `${tool.neededBy} needs ${tool.name}==${tool.version} from PyPI in ${venvOf(tool)}: check that ` +
      `python3 (with venv and pip) is installed and that pip can reach PyPI, or install it there by hand.\n${output}`,
  );
}

/** The pinned tool, installed when missing or broken. */
export function ensurePythonTool(tool: PythonTool): InstalledTool {
  const venv = venvOf(tool);
  const installed = { bin: join(venv, 'bin', tool.name), python: join(venv, 'bin', 'python') };
  if (installedVersion(installed.bin) === tool.version) return installed;
  // A half-made venv (interrupted install) is rebuilt from scratch.
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(join(ROOT, '.tools', tool.name), { recursive: true });
  const python = process.env.PYTHON ?? 'python3';
  console.log(`installing ${tool.name}==${tool.version} from PyPI into ${venv}…`);
  run(tool, python, ['-m', 'venv', venv], `${python} -m venv`, 120_000);
  run(
    tool,
    installed.python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', `${tool.name}==${tool.version}`],
    `pip install ${tool.name}==${tool.version}`,
    600_000,
  );
  const version = installedVersion(installed.bin);
  if (version !== tool.version) {
    throw new Error(`${tool.name} in ${venv} reports version ${String(version)}, expected ${tool.version}`);
  }
  return installed;
}

export interface ToolRun {
  exitCode: number | null;
  output: string;
}

/**
 * Runs a tool as a child process without blocking this one: an API under test may live
 * in the same process and must keep answering.
 */
export function runTool(bin: string, args: string[], opts: { timeoutMs: number; cwd: string }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bin} did not finish within ${opts.timeoutMs} ms:\n${output.slice(-4000)}`));
    }, opts.timeoutMs);
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
