// Readiness: a started process counts as up only when its probe passes (a log line, an
// HTTP answer, a polled check), raced against its exit, a deadline and an interrupt. What
// it printed explains a failure: the port it found taken, the last error it logged.
import type { Child } from './child.js';
import { describeExit } from './child.js';
import { addressInUse } from './ports.js';

/** What a readiness probe can wait for; each helper resolves when its condition holds. */
export interface ReadyContext {
  pid: number;
  /** Aborted once the wait is over, whatever its outcome. */
  signal: AbortSignal;
  /** Resolves on the first output line for which `test` is true (ANSI colors removed). */
  line(description: string, test: (line: string) => boolean): Promise<void>;
  /** Resolves when GET `url` answers `status`. */
  http(url: string, status?: number): Promise<void>;
  /** Resolves when `check` returns true, polled. */
  poll(description: string, check: () => Promise<boolean>, intervalMs?: number): Promise<void>;
}

export type Probe = (ctx: ReadyContext) => Promise<void>;

/** Ready once a line of output contains `text`. */
export function lineProbe(text: string): Probe {
  return (ctx) => ctx.line(`"${text}" in its output`, (line) => line.includes(text));
}

/** Ready once GET `url` answers 200. */
export function httpProbe(url: string): Probe {
  return (ctx) => ctx.http(url);
}

/** A start that did not succeed; `part` names what failed, the message says why. */
export class StartError extends Error {
  override name = 'StartError';
  constructor(
    readonly part: string,
    message: string,
    /** Failed starts in a row behind this one. */
    readonly attempts = 1,
  ) {
    super(message);
  }
}

/** The start was called off (a stop was asked for while it was starting). */
export class AbortedError extends Error {
  override name = 'AbortedError';
  constructor() {
    super('start interrupted');
  }
}

// Built from a string: a literal ESC in a regex trips no-control-regex.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Watches one process's output for readiness lines, a taken port and its errors. */
export class OutputWatch {
  private readonly listeners = new Set<(line: string) => void>();
  portConflict: { port?: number } | undefined;
  lastError: string | undefined;

  feed(line: string): void {
    const plain = stripAnsi(line);
    this.portConflict ??= addressInUse(plain);
    this.lastError = errorSummary(plain) ?? this.lastError;
    for (const listener of this.listeners) listener(plain);
  }

  onLine(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Level names of JSON loggers (zap, as the Go servers log; pino's names) that mean an error. */
const ERROR_LEVELS = new Set(['error', 'fatal', 'dpanic', 'panic']);

/**
 * A one-line summary of an error in a child's output: a JSON log line at level error or
 * above (pino's numeric levels, or a level name as Go's zap writes it), PostgreSQL's
 * `FATAL:`/`PANIC:` lines, a Go `panic:`, or "XxxError: ...".
 */
export function errorSummary(line: string): string | undefined {
  if (line.startsWith('{')) {
    try {
      const entry = JSON.parse(line) as { level?: unknown; msg?: string; err?: { message?: string }; error?: unknown };
      const { level } = entry;
      const isError =
        typeof level === 'number' ? level >= 50 : typeof level === 'string' && ERROR_LEVELS.has(level.toLowerCase());
      if (isError) {
        const cause = entry.err?.message ?? (typeof entry.error === 'string' ? entry.error : undefined);
        return [entry.msg, cause].filter(Boolean).join(': ').slice(0, 300);
      }
    } catch {
      // not JSON after all
    }
    return undefined;
  }
  const trimmed = line.trim();
  const pg = /\b(?:FATAL|PANIC):\s+(.*)$/.exec(trimmed);
  if (pg) return pg[1]!.slice(0, 300);
  if (/^panic: /.test(trimmed)) return trimmed.slice(0, 300);
  if (/^([A-Z]\w*)?Error\b.*:/.test(trimmed) || /^\w*Error \[/.test(trimmed)) return trimmed.slice(0, 300);
  return undefined;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface WaitOptions {
  name: string;
  timeoutMs: number;
  /** Grace of the stop that follows a failed or interrupted start. */
  stopGraceMs: number;
  /** The signal of that stop (SIGTERM unless the part says otherwise). */
  stopSignal?: NodeJS.Signals;
  /** Aborted when the start is called off. */
  signal: AbortSignal;
}

/**
 * Resolves once `probe` passes. Otherwise stops the child and throws: StartError (it
 * exited, the probe failed or the deadline passed) or AbortedError (called off).
 */
export async function waitReady(child: Child, watch: OutputWatch, probe: Probe, opts: WaitOptions): Promise<void> {
  const probeAbort = new AbortController();
  let waitingFor = 'it to start';
  const ctx: ReadyContext = {
    pid: child.pid,
    signal: probeAbort.signal,
    line(description, test) {
      waitingFor = description;
      return new Promise<void>((resolve) => {
        const off = watch.onLine((line) => {
          if (test(line)) {
            off();
            resolve();
          }
        });
        probeAbort.signal.addEventListener('abort', off, { once: true });
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
      probe(ctx).catch((err: unknown) => {
        throw err instanceof StartError ? err : new StartError(opts.name, (err as Error).message);
      }),
      child.exited.then(async (info) => {
        await sleep(50); // let the last lines of its output arrive
        const reason = watch.portConflict
          ? `port ${watch.portConflict.port ?? '(see its output)'} is already in use (${describeExit(info)})`
          : `${describeExit(info)} before it was ready${watch.lastError ? `: ${watch.lastError}` : ''}`;
        throw new StartError(opts.name, reason);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new StartError(opts.name, `not ready after ${Math.round(opts.timeoutMs / 1000)} s (waiting for ${waitingFor})`),
            ),
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
    await child.stop(opts.stopGraceMs, opts.stopSignal);
    throw err;
  } finally {
    probeAbort.abort();
    clearTimeout(timer);
    if (onAbort) opts.signal.removeEventListener('abort', onAbort);
  }
}
