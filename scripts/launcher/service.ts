// One supervised child process of the stack (bank, worker, API): `node --import tsx
// <entry>` run through execa, its output prefixed with its name, started only when its
// ports are free and declared ready only when its probe passes.
//
// Children run `node --import tsx` directly rather than the `tsx` CLI: the CLI is a second
// process that relays signals, and killing it would orphan the real one. They are
// `detached` (their own process group) so that a Ctrl-C typed in the terminal reaches the
// launcher alone, which then stops them in reverse order. execa's `cleanup` does not apply
// to detached children, so this module keeps its own exit hook (killLeftovers), and each
// child preloads orphan-guard.mjs, which stops it if the launcher is killed outright.
import { execa, type ResultPromise } from 'execa';
import { addressInUse, type PortClaim } from './ports.js';
import { eachLine, stripAnsi, type Output } from './output.js';

export interface ExitInfo {
  code: number | undefined;
  signal: string | undefined;
}

export function describeExit(info: ExitInfo): string {
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code ?? '?'}`;
}

/** What a readiness probe can wait for; each helper resolves when its condition holds. */
export interface ReadyContext {
  pid: number;
  signal: AbortSignal;
  /** Resolves on the first output line for which `test` is true (ANSI colors removed). */
  line(description: string, test: (line: string) => boolean): Promise<void>;
  /** Resolves when GET `url` answers `status`. */
  http(url: string, status?: number): Promise<void>;
  /** Resolves when `check` returns true, polled. */
  poll(description: string, check: () => Promise<boolean>, intervalMs?: number): Promise<void>;
}

export interface ServiceSpec {
  /** Short name: the output prefix and the name in messages. */
  name: string;
  /** Entry point relative to the repository root. */
  entry: string;
  /** Variables set for this child on top of the launcher's environment. */
  env: Record<string, string>;
  /** Variables removed from the inherited environment. */
  unsetEnv?: string[];
  /** The ports it will listen on, checked before anything starts. */
  ports: PortClaim[];
  /** The child's own config loader, run on the environment it will get; throws ConfigError. */
  validate(env: Record<string, string | undefined>): void;
  /** Its rows in the banner. */
  banner: { label: string; value: string; note?: string }[];
  /** The files it keeps in the data dir. */
  dataFiles?: string[];
  ready(ctx: ReadyContext): Promise<void>;
}

/** The environment a child gets: the launcher's, plus its own variables, minus unsetEnv. */
export function childEnv(spec: ServiceSpec): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...spec.env };
  for (const name of spec.unsetEnv ?? []) delete env[name];
  return env;
}

/** A part of the stack that runs until stopped. */
export interface Part {
  name: string;
  /** Resolves when the process ends, for whatever reason. */
  exited: Promise<ExitInfo>;
  running(): boolean;
  stop(): Promise<void>;
  /** Last resort (a second Ctrl-C): SIGKILL, no waiting. */
  kill(): void;
}

/** A start step that did not succeed; `part` names what failed, the message says why. */
export class StartError extends Error {
  override name = 'StartError';
  constructor(
    readonly part: string,
    message: string,
  ) {
    super(message);
  }
}

export class AbortedError extends Error {
  override name = 'AbortedError';
  constructor() {
    super('start interrupted');
  }
}

const ORPHAN_GUARD = new URL('./orphan-guard.mjs', import.meta.url).href;

const liveGroups = new Set<number>();
let hookInstalled = false;

/** SIGTERMs every child process group still alive: the launcher is exiting without a stop. */
export function killLeftovers(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      // already gone
    }
  }
}

function track(pid: number): void {
  liveGroups.add(pid);
  if (!hookInstalled) {
    hookInstalled = true;
    process.on('exit', () => killLeftovers());
  }
}

export interface StartOptions {
  root: string;
  output: Output;
  timeoutMs: number;
  stopGraceMs: number;
  /** Aborted when the user asks the launcher to stop while this part is starting. */
  signal: AbortSignal;
}

export async function startService(spec: ServiceSpec, opts: StartOptions): Promise<Part> {
  const { output } = opts;
  const env = childEnv(spec);
  const child: ResultPromise = execa(process.execPath, ['--import', 'tsx', '--import', ORPHAN_GUARD, spec.entry], {
    cwd: opts.root,
    env,
    extendEnv: false,
    detached: true,
    killSignal: 'SIGTERM',
    forceKillAfterDelay: opts.stopGraceMs,
    reject: false,
    stdin: 'ignore',
    buffer: false,
  });
  const pid = child.pid;
  if (pid === undefined) {
    const result = await child;
    throw new StartError(spec.name, `could not be spawned: ${result.shortMessage ?? result.message}`);
  }
  track(pid);

  let alive = true;
  const exited: Promise<ExitInfo> = child.then((r) => {
    alive = false;
    // Anything the child left in its group goes with it.
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is empty: the usual case
    }
    liveGroups.delete(pid);
    return { code: r.exitCode, signal: r.signal };
  });

  const lineListeners = new Set<(line: string) => void>();
  let portConflict: { port?: number } | undefined;
  const errorLines: string[] = [];
  const onLine = (stream: 'stdout' | 'stderr') => (line: string) => {
    output.child(spec.name, line, stream);
    const plain = stripAnsi(line);
    portConflict ??= addressInUse(plain);
    const err = errorSummary(plain);
    if (err) errorLines.push(err);
    for (const listener of lineListeners) listener(plain);
  };
  eachLine(child.stdout, onLine('stdout'));
  eachLine(child.stderr, onLine('stderr'));

  const part: Part = {
    name: spec.name,
    exited,
    running: () => alive,
    async stop() {
      if (!alive) return;
      child.kill('SIGTERM'); // execa sends SIGKILL after forceKillAfterDelay
      await exited;
    },
    kill() {
      if (!alive) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };

  // Readiness: the probe, raced against the child's exit, the deadline and an interrupt.
  const probeAbort = new AbortController();
  let waitingFor = 'it to start';
  const ctx: ReadyContext = {
    pid,
    signal: probeAbort.signal,
    line(description, test) {
      waitingFor = description;
      return new Promise<void>((resolve) => {
        const listener = (line: string) => {
          if (test(line)) {
            lineListeners.delete(listener);
            resolve();
          }
        };
        lineListeners.add(listener);
      });
    },
    http(url, status = 200) {
      return ctx.poll(`GET ${url} to answer ${status}`, async () => {
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
          await res.body?.cancel();
          return res.status === status;
        } catch {
          return false;
        }
      });
    },
    async poll(description, check, intervalMs = 150) {
      waitingFor = description;
      while (!probeAbort.signal.aborted) {
        if (await check()) return;
        await sleep(intervalMs, probeAbort.signal);
      }
    },
  };

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      spec.ready(ctx),
      exited.then(async (info) => {
        await sleep(50); // let the last lines of its output arrive
        const reason = portConflict
          ? `port ${portConflict.port ?? '(see its output)'} is already in use (${describeExit(info)})`
          : `${describeExit(info)} before it was ready${errorLines.length ? `: ${errorLines.at(-1)}` : ''}`;
        throw new StartError(spec.name, reason);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new StartError(spec.name, `not ready after ${Math.round(opts.timeoutMs / 1000)} s (waiting for ${waitingFor})`)),
          opts.timeoutMs,
        );
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(new AbortedError());
        if (opts.signal.aborted) onAbort();
        else opts.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } catch (err) {
    await part.stop();
    if (err instanceof AbortedError) output.info(`${spec.name} stopped (interrupted while starting)`);
    throw err;
  } finally {
    probeAbort.abort();
    clearTimeout(timer);
    if (onAbort) opts.signal.removeEventListener('abort', onAbort);
  }
  return part;
}

/** A one-line summary of an error in a child's output: pino JSON at level error, or "XxxError: ...". */
function errorSummary(line: string): string | undefined {
  if (line.startsWith('{')) {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50) return [entry.msg, entry.err?.message].filter(Boolean).join(': ');
    } catch {
      // not JSON after all
    }
    return undefined;
  }
  const trimmed = line.trim();
  if (/^([A-Z]\w*)?Error\b.*:/.test(trimmed) || /^\w*Error \[/.test(trimmed)) return trimmed.slice(0, 300);
  return undefined;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
