// The data directory holds every part's state (temporal.db, bank.db...). One launcher at a
// time may use it: two dev servers on one SQLite file would corrupt it. A lock file names
// the launcher and its dev server, so a dev server left behind by a launcher that was
// killed outright (SIGKILL: no exit hook runs) is stopped by the next start. --reset
// empties the directory, with a guard against pointing it somewhere precious.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, parse, relative, resolve } from 'node:path';

const LOCK_FILE = 'launcher.lock';

export class DataDirError extends Error {
  override name = 'DataDirError';
}

interface Lock {
  launcher: number;
  temporal?: number;
}

function readLock(dataDir: string): Lock | undefined {
  try {
    const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as Partial<Lock>;
    return Number.isInteger(lock.launcher) ? (lock as Lock) : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLine(pid: number): string {
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/**
 * Refuses a data dir another live launcher is using; stops a dev server that a dead one
 * left running on it (recognised by its command line naming our temporal.db). Returns a
 * note for the user when it did.
 */
export async function takeOverDataDir(dataDir: string): Promise<string | undefined> {
  const lock = readLock(dataDir);
  if (!lock || lock.launcher === process.pid) return undefined;
  if (alive(lock.launcher)) {
    throw new DataDirError(
      `${dataDir} is in use by another launcher (pid ${lock.launcher}); stop it first (or delete ${join(dataDir, LOCK_FILE)} if that process is not a launcher)`,
    );
  }
  const pid = lock.temporal;
  if (pid === undefined || !alive(pid)) return undefined;
  const args = commandLine(pid);
  if (!args.includes('start-dev') || !args.includes(join(dataDir, 'temporal.db'))) return undefined;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  return `stopped the Temporal dev server (pid ${pid}) that a killed launcher (pid ${lock.launcher}) left running`;
}

/** Deletes the data directory, refusing paths that cannot be a data directory. */
export function resetDataDir(dataDir: string, root: string): void {
  const dir = resolve(dataDir);
  const refuse = (why: string) => {
    throw new DataDirError(`--reset refuses to delete ${dir}: ${why}`);
  };
  if (dir === parse(dir).root) refuse('it is a filesystem root');
  if (dir === homedir()) refuse('it is the home directory');
  const fromDir = relative(dir, root);
  if (fromDir === '' || !fromDir.startsWith('..')) refuse('it holds the repository');
  if (existsSync(join(dir, '.git')) || existsSync(join(dir, 'package.json')))
    refuse('it looks like a project, not a data directory');
  rmSync(dir, { recursive: true, force: true });
}

export interface DataDirClaim {
  /** Records the dev server's pid, for takeOverDataDir after a hard kill. */
  setTemporalPid(pid: number | undefined): void;
  release(): void;
}

/** Creates the directory and marks it as used by this launcher. */
export function claimDataDir(dataDir: string): DataDirClaim {
  const file = join(dataDir, LOCK_FILE);
  const write = (lock: Lock) => writeFileSync(file, JSON.stringify(lock) + '\n');
  try {
    mkdirSync(dataDir, { recursive: true });
    write({ launcher: process.pid });
  } catch (err) {
    throw new DataDirError(`cannot use ${dataDir} as the data directory: ${(err as Error).message} (set RETRYSAFE_DATA_DIR)`);
  }
  const release = () => {
    if (readLock(dataDir)?.launcher !== process.pid) return;
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on('exit', release);
  return {
    setTemporalPid: (pid) => write({ launcher: process.pid, ...(pid ? { temporal: pid } : {}) }),
    release,
  };
}
