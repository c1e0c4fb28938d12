// One part of a stack under supervision: a process started until its probe says it is up,
// and kept up. With a restart policy, a part that dies on its own is started again after a
// back-off that doubles while it keeps dying; a start that fails is tried again the same
// way, and a part that cannot start `maxFailedStarts` times in a row gives up, saying why
// (what that means for the rest is the supervisor's caller's decision). Without one, a
// failed start fails at once and an exit is only reported.
import { fileURLToPath } from 'node:url';
import { spawnChild, SpawnError, type Child, type Command, type ExitInfo } from './child.js';
import { AbortedError, OutputWatch, sleep, StartError, waitReady, type Probe } from './ready.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RestartPolicy {
  /** Failed starts in a row after which the part gives up. */
  maxFailedStarts: number;
  /** Delay before the first restart; it doubles with each restart in a row, up to maxDelayMs. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Up at least this long, a part counts as stable: its next crash waits initialDelayMs again. */
  stableAfterMs: number;
}

export interface PartSpec {
  /** Short name: the output prefix and the name in messages. */
  name: string;
  command: Command;
  /** Working directory; the repository root by default. */
  cwd?: string;
  /** Variables set on top of this process's environment. */
  env?: Record<string, string>;
  /** Run as this user and group (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Inherited variables the child must not see: names, or patterns of names. */
  unsetEnv?: Array<string | RegExp>;
  /** When the started process counts as up; at once when absent. */
  ready?: Probe;
  readyTimeoutMs?: number;
  /**
   * The signal that asks it to stop cleanly: SIGTERM by default; PostgreSQL's fast
   * shutdown is SIGINT (its SIGTERM waits for every client to disconnect).
   */
  stopSignal?: NodeJS.Signals;
  /** How long a stop may take before the group is killed. */
  stopGraceMs?: number;
  /** Its own process group (the default): a terminal's Ctrl-C then reaches the supervisor only. */
  detached?: boolean;
  restart?: RestartPolicy;
  onLine?(line: string, stream: 'stdout' | 'stderr'): void;
  /** Called with each new process id (a restart is a new process). */
  onSpawn?(pid: number): void;
  /** How many recent lines `output` keeps (default 200). */
  keepLines?: number;
}

export type PartEvent =
  /** The process exited while it was up and nobody had asked it to. */
  | { type: 'crashed'; part: Part; exit: ExitInfo; restartInMs: number | undefined }
  /** A start failed; the next attempt comes after `retryInMs`. */
  | { type: 'retrying'; part: Part; reason: string; failures: number; retryInMs: number }
  /** Up again after a crash. */
  | { type: 'restarted'; part: Part }
  /** After a crash, it could not start `error.attempts` times in a row: it stays down. */
  | { type: 'gave-up'; part: Part; error: StartError };

type State = 'down' | 'starting' | 'waiting' | 'up' | 'stopping' | 'gave-up';

export class Part {
  readonly name: string;
  /** The most recent output lines, oldest first. */
  readonly output: string[] = [];
  /** Processes spawned so far. */
  spawns = 0;
  /** Exits nobody asked for. */
  unexpectedExits = 0;
  private state: State = 'down';
  private child: Child | undefined;
  private wanted = false;
  private run: AbortController | undefined;
  private bringing: Promise<void> | undefined;
  private upSince = 0;
  private crashesInARow = 0;

  constructor(
    readonly spec: PartSpec,
    private readonly onEvent: (event: PartEvent) => void = () => undefined,
  ) {
    this.name = spec.name;
  }

  /** Up: started, probed, and not stopped since. */
  get running(): boolean {
    return this.state === 'up';
  }

  /** Being stopped on request: its exit is expected. */
  get stopping(): boolean {
    return this.state === 'stopping';
  }

  /** The current process's id, while there is one. */
  get pid(): number | undefined {
    return this.child?.running() ? this.child.pid : undefined;
  }

  /** Resolves when the current process ends. */
  get exited(): Promise<ExitInfo> | undefined {
    return this.child?.exited;
  }

  /**
   * Starts the part and resolves once it is up. Throws StartError once it could not start
   * (after the policy's attempts), AbortedError when stop() or `signal` called it off.
   */
  start(signal?: AbortSignal): Promise<void> {
    if (this.state === 'up') return Promise.resolve();
    if (this.bringing) return this.bringing;
    this.wanted = true;
    const bringing = this.bringUp(signal, 0).finally(() => {
      if (this.bringing === bringing) this.bringing = undefined;
    });
    this.bringing = bringing;
    return bringing;
  }

  /**
   * Stops the part (its stop signal, or `signal`; SIGKILL of its group after the grace period),
   * calling off a start or a restart in progress. Resolves with the exit of the process
   * it stopped, if one was running.
   */
  async stop(opts: { signal?: NodeJS.Signals } = {}): Promise<{ exit: ExitInfo | undefined }> {
    this.wanted = false;
    this.state = 'stopping';
    this.run?.abort();
    const child = this.child;
    const exit = child?.running()
      ? await child.stop(opts.signal === 'SIGKILL' ? 0 : this.graceMs, opts.signal ?? this.stopSignal)
      : undefined;
    await this.bringing?.catch(() => undefined);
    // A start asked for meanwhile owns the state from here.
    if (this.state === 'stopping') this.state = 'down';
    return { exit };
  }

  /** Last resort: SIGKILL to its whole group now, no waiting, no restart. */
  kill(): void {
    this.wanted = false;
    this.state = 'stopping';
    this.run?.abort();
    this.child?.kill('SIGKILL');
  }

  private get graceMs(): number {
    return this.spec.stopGraceMs ?? 10_000;
  }

  private get stopSignal(): NodeJS.Signals {
    return this.spec.stopSignal ?? 'SIGTERM';
  }

  private delay(n: number): number {
    const policy = this.spec.restart;
    if (!policy) return 0;
    return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** n);
  }

  private async bringUp(outer: AbortSignal | undefined, firstDelayMs: number): Promise<void> {
    const run = new AbortController();
    this.run = run;
    const onOuter = () => run.abort();
    if (outer?.aborted) run.abort();
    outer?.addEventListener('abort', onOuter, { once: true });
    const maxFailures = this.spec.restart?.maxFailedStarts ?? 1;
    try {
      if (firstDelayMs > 0) {
        this.state = 'waiting';
        await sleep(firstDelayMs, run.signal);
      }
      for (let failures = 0; ;) {
        if (run.signal.aborted) throw new AbortedError();
        this.state = 'starting';
        try {
          await this.attempt(run.signal);
          this.state = 'up';
          this.upSince = Date.now();
          return;
        } catch (err) {
          if (run.signal.aborted || err instanceof AbortedError) throw new AbortedError();
          if (!(err instanceof StartError)) throw err;
          failures++;
          if (failures >= maxFailures) {
            this.state = 'gave-up';
            throw new StartError(this.name, err.message, failures);
          }
          const retryInMs = this.delay(this.crashesInARow + failures - 1);
          this.state = 'waiting';
          this.onEvent({ type: 'retrying', part: this, reason: err.message, failures, retryInMs });
          await sleep(retryInMs, run.signal);
        }
      }
    } finally {
      outer?.removeEventListener('abort', onOuter);
      if (this.state === 'starting' || this.state === 'waiting') this.state = 'down';
    }
  }

  private async attempt(signal: AbortSignal): Promise<void> {
    const { spec } = this;
    const env: Record<string, string | undefined> = { ...process.env };
    for (const unset of spec.unsetEnv ?? []) {
      for (const name of Object.keys(env)) if (typeof unset === 'string' ? name === unset : unset.test(name)) delete env[name];
    }
    Object.assign(env, spec.env);
    const watch = new OutputWatch();
    const keep = spec.keepLines ?? 200;
    let child: Child;
    try {
      child = await spawnChild(spec.command, {
        cwd: spec.cwd ?? ROOT,
        env,
        detached: spec.detached ?? true,
        ...(spec.uid !== undefined ? { uid: spec.uid } : {}),
        ...(spec.gid !== undefined ? { gid: spec.gid } : {}),
        onLine: (line, stream) => {
          this.output.push(line);
          if (this.output.length > keep) this.output.splice(0, this.output.length - keep);
          watch.feed(line);
          spec.onLine?.(line, stream);
        },
      });
    } catch (err) {
      if (err instanceof SpawnError) throw new StartError(this.name, err.message);
      throw err;
    }
    this.child = child;
    this.spawns++;
    spec.onSpawn?.(child.pid);
    void child.exited.then((exit) => this.onExit(child, exit));
    await waitReady(child, watch, spec.ready ?? (async () => undefined), {
      name: this.name,
      timeoutMs: spec.readyTimeoutMs ?? 60_000,
      stopGraceMs: this.graceMs,
      stopSignal: this.stopSignal,
      signal,
    });
  }

  /** An exit while up that nobody asked for: report it and, with a policy, restart. */
  private onExit(child: Child, exit: ExitInfo): void {
    if (child !== this.child || this.state !== 'up' || !this.wanted) return;
    this.unexpectedExits++;
    const policy = this.spec.restart;
    if (!policy) {
      this.state = 'down';
      this.onEvent({ type: 'crashed', part: this, exit, restartInMs: undefined });
      return;
    }
    const stable = Date.now() - this.upSince >= policy.stableAfterMs;
    this.crashesInARow = stable ? 0 : this.crashesInARow + 1;
    const restartInMs = this.delay(Math.max(0, this.crashesInARow - 1));
    this.state = 'waiting';
    this.onEvent({ type: 'crashed', part: this, exit, restartInMs });
    const bringing: Promise<void> = this.bringUp(undefined, restartInMs)
      .then(
        () => this.onEvent({ type: 'restarted', part: this }),
        (err: unknown) => {
          if (err instanceof StartError) this.onEvent({ type: 'gave-up', part: this, error: err });
          else if (!(err instanceof AbortedError)) throw err;
        },
      )
      .finally(() => {
        if (this.bringing === bringing) this.bringing = undefined;
      });
    this.bringing = bringing;
  }
}
