// One child process, as every part of a stack is run: through execa, by default in its own
// process group (detached), so that a Ctrl-C typed in a terminal reaches the supervisor
// alone, which then stops the parts in order. TypeScript entries run as `node --import
// tsx <entry>` rather than through the `tsx` CLI: the CLI is a second process that relays
// signals, and killing it would orphan the real one. execa's `cleanup` does not cover a
// detached child, so this module keeps its own exit hook (killLeftovers), and every Node
// child preloads orphan-guard.mjs, which stops it when its parent is killed outright
// (SIGKILL runs no exit hook). A binary gets the same guard from the kernel when it asks for
// one (`orphanSignal`): on Linux it is started through util-linux's `setpriv --pdeathsig`,
// which has the kernel signal it the moment its parent dies.
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { execa } from 'execa';

export interface ExitInfo {
  code: number | undefined;
  signal: string | undefined;
}

export function describeExit(info: ExitInfo): string {
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code ?? '?'}`;
}

/**
 * What a part runs: an entry point of this repository (TypeScript, through tsx, or the
 * compiled JavaScript under dist/), or any executable with its arguments (a Go server,
 * PostgreSQL). `orphanSignal` asks that the executable get that signal if this process
 * dies without stopping it (where the platform can: Linux with setpriv), as the Node
 * entries stop themselves through the orphan guard.
 */
export type Command = { entry: string; execArgv?: string[] } | { bin: string; args: string[]; orphanSignal?: NodeJS.Signals };

const ORPHAN_GUARD = new URL('./orphan-guard.mjs', import.meta.url).href;

let setprivPath: string | null | undefined;

/** util-linux's setpriv when it can set a parent-death signal, else null (macOS, old util-linux). */
function setpriv(): string | null {
  if (setprivPath !== undefined) return setprivPath;
  setprivPath = null;
  if (process.platform !== 'linux') return setprivPath;
  for (const candidate of ['/usr/bin/setpriv', '/bin/setpriv']) {
    try {
      if (
        execFileSync(candidate, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('--pdeathsig')
      ) {
        setprivPath = candidate;
        break;
      }
    } catch {
      // not there
    }
  }
  return setprivPath;
}

/** The executable and the arguments that run `command`. */
export function argvOf(command: Command): [string, string[]] {
  if ('entry' in command) {
    // A compiled entry (dist/, `npm run build`) runs on Node alone, as in production.
    const loader = command.entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
    return [process.execPath, [...(command.execArgv ?? []), ...loader, '--import', ORPHAN_GUARD, command.entry]];
  }
  const guard = command.orphanSignal ? setpriv() : null;
  // setpriv execs the binary in place: same pid, same process group, its signals unchanged.
  return guard
    ? [guard, ['--pdeathsig', command.orphanSignal!, '--', command.bin, ...command.args]]
    : [command.bin, command.args];
}

export interface ChildOptions {
  cwd: string;
  /** The child's whole environment: nothing else is inherited. */
  env: Record<string, string | undefined>;
  detached: boolean;
  /** Run as this user and group (a server that refuses to run as root: PostgreSQL). */
  uid?: number;
  gid?: number;
  onLine(line: string, stream: 'stdout' | 'stderr'): void;
}

export interface Child {
  pid: number;
  /** Resolves when the process ends, for whatever reason. */
  exited: Promise<ExitInfo>;
  running(): boolean;
  /**
   * Sends `signal` to the process (SIGTERM: its own graceful shutdown), and SIGKILL to its
   * whole group once `graceMs` passed; resolves when it is gone.
   */
  stop(graceMs: number, signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** `signal` to the whole group at once, without waiting. */
  kill(signal?: NodeJS.Signals): void;
}

export class SpawnError extends Error {
  override name = 'SpawnError';
}

const liveGroups = new Set<number>();
let hookInstalled = false;

/** Signals every child process group still alive: this process is exiting without a stop. */
export function killLeftovers(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const pgid of liveGroups) signalGroup(pgid, signal);
}

/** The group when the child leads one (detached), else the process itself. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function eachLine(stream: Readable | null | undefined, onLine: (line: string) => void): void {
  if (!stream) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
}

export async function spawnChild(command: Command, opts: ChildOptions): Promise<Child> {
  const [file, args] = argvOf(command);
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    detached: opts.detached,
    ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
    ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
    cleanup: !opts.detached,
    reject: false,
    stdin: 'ignore',
    buffer: false,
  });
  const pid = child.pid;
  if (pid === undefined) {
    const result = await child;
    throw new SpawnError(`could not be spawned: ${result.shortMessage ?? result.message}`);
  }
  if (opts.detached) {
    liveGroups.add(pid);
    if (!hookInstalled) {
      hookInstalled = true;
      process.on('exit', () => killLeftovers());
    }
  }

  let alive = true;
  const exited: Promise<ExitInfo> = child.then((r) => {
    alive = false;
    // Anything the child left in its group goes with it.
    if (opts.detached) {
      signalGroup(pid, 'SIGKILL');
      liveGroups.delete(pid);
    }
    return { code: r.exitCode, signal: r.signal };
  });
  eachLine(child.stdout, (line) => opts.onLine(line, 'stdout'));
  eachLine(child.stderr, (line) => opts.onLine(line, 'stderr'));

  return {
    pid,
    exited,
    running: () => alive,
    async stop(graceMs, signal = 'SIGTERM') {
      if (!alive) return exited;
      if (signal === 'SIGKILL') signalGroup(pid, 'SIGKILL');
      else child.kill(signal);
      const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    kill(signal = 'SIGKILL') {
      if (alive) signalGroup(pid, signal);
    },
  };
}
