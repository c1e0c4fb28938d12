// Runs the real launcher (`node --import tsx tools/start.ts`) as a child process, on
// free ports and a temporary data dir, stops what a test left running, and finds any
// process it left behind.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface StackPorts {
  temporal: number;
  ui: number;
  bank: number;
  reservations: number;
  metrics: number;
  api: number;
}

export async function freeStackPorts(): Promise<StackPorts> {
  const ports = new Set<number>();
  while (ports.size < 6) ports.add(await freePort());
  const [temporal, ui, bank, reservations, metrics, api] = [...ports] as [number, number, number, number, number, number];
  return { temporal, ui, bank, reservations, metrics, api };
}

/** The environment a user's shell would give `npm start`: none of the test runner's, no cluster. */
export function launcherEnv(dataDir: string, ports: StackPorts, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(VITEST|TEMPORAL_|RETRYSAFE_|LOG_|NODE_OPTIONS$|API_|BANK_|WORKER_|RESERVATIONS_|SANDBOX_)/.test(k)) continue;
    env[k] = v;
  }
  return {
    ...env,
    RETRYSAFE_DATA_DIR: dataDir,
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    BANK_PORT: String(ports.bank),
    RESERVATIONS_PORT: String(ports.reservations),
    WORKER_METRICS_PORT: String(ports.metrics),
    API_PORT: String(ports.api),
    ...extra,
  };
}

export class LauncherProcess {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly spawnedAt = Date.now();
  private waiters = new Set<() => void>();

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'tools/start.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString('utf8');
      for (const w of this.waiters) w();
    };
    this.child.stdout!.on('data', collect);
    this.child.stderr!.on('data', collect);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the match once the output matches `pattern`; rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this.output.match(pattern);
        if (m) {
          done();
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${this.tail()}`));
      }, timeoutMs);
      void this.exited.then(({ code, signal }) => {
        check();
        done();
        reject(new Error(`launcher exited (${signal ?? code}) before ${pattern}; output:\n${this.tail()}`));
      });
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits for the exit, SIGKILLing after `timeoutMs`; returns how it ended and how long it took. */
  async exit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; timedOut: boolean }> {
    const t0 = Date.now();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.child.kill('SIGKILL');
    }, timeoutMs);
    const r = await this.exited;
    clearTimeout(timer);
    return { ...r, ms: Date.now() - t0, timedOut };
  }

  tail(chars = 6000): string {
    return this.output.slice(-chars);
  }
}

/** Every process under `pid` right now (children, grandchildren...). */
export function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of table) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0) until reaped; it is not running anything.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Processes whose command line or environment mentions one of `markers` (the temp dir,
 * the ports), with their command lines. Environment is read from /proc (Linux); elsewhere
 * only command lines are searched.
 */
export function processesMentioning(markers: string[]): string[] {
  const hits: string[] = [];
  if (existsSync('/proc/self/environ')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      let cmdline = '';
      let environ = '';
      try {
        cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
        environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      } catch {
        continue; // gone, or not ours
      }
      if (markers.some((m) => cmdline.includes(m) || environ.includes(m))) hits.push(`${entry} ${cmdline}`);
    }
    return hits;
  }
  const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  for (const line of ps.split('\n')) if (markers.some((m) => line.includes(m))) hits.push(line.trim());
  return hits;
}

/** The process id of the launcher's child that runs `entry` (e.g. downstream/bank/server.ts). */
export function childRunning(launcherPid: number, entry: string): number | undefined {
  return descendants(launcherPid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(entry);
    } catch {
      return false;
    }
  });
}

/**
 * The launchers of the file that calls this, their data dirs under one temporary folder
 * (`prefix`...): each still running after its test is stopped then (a failed assertion must
 * not leave a stack for the next test), and any process that still mentions the folder is
 * killed after the file.
 */
export function useLaunchers(prefix: string) {
  let root = '';
  const running = new Set<LauncherProcess>();
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    for (const launcher of running) {
      launcher.child.kill('SIGTERM');
      await launcher.exit(20_000);
    }
    running.clear();
  });
  afterAll(() => {
    for (const hit of processesMentioning([root])) {
      try {
        process.kill(Number(hit.split(' ')[0]), 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (!process.env.RETRYSAFE_KEEP_TEST_DATA) rmSync(root, { recursive: true, force: true });
  });
  return {
    /** A path in the file's temporary folder. */
    dir: (name: string) => join(root, name),
    /** The launcher with these flags, on these ports, its data in `dataDir`. */
    launch(args: string[], dataDir: string, ports: StackPorts, extra?: Record<string, string>): LauncherProcess {
      const launcher = new LauncherProcess(args, launcherEnv(dataDir, ports, extra));
      running.add(launcher);
      return launcher;
    },
    /** A launcher the test has stopped itself: nothing left to stop after it. */
    stopped(launcher: LauncherProcess): void {
      running.delete(launcher);
    },
  };
}
