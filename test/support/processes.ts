// A part of the stack as a real process in a test (`node --import tsx <entry>`), run by the
// repository's one supervisor like every other process; its whole output is kept for the
// test to read.
import { Part } from '../../tools/supervisor/part.js';

export interface ChildHandle {
  /** Every line it printed so far, stdout and stderr. */
  output: string[];
  /** Its process id while it runs. */
  readonly pid: number | undefined;
  /** Resolves once a line containing `text` was printed; rejects if it exits first. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Stops it with `signal` (SIGTERM: its graceful shutdown) and waits for its exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnEntry(entry: string, env: Record<string, string>): ChildHandle {
  const waiters = new Set<{ text: string; resolve: () => void }>();
  const part = new Part({
    name: entry,
    command: { entry },
    env: { LOG_PRETTY: '0', ...env },
    keepLines: Infinity,
    onLine: (line) => {
      for (const w of waiters) {
        if (!line.includes(w.text)) continue;
        waiters.delete(w);
        w.resolve();
      }
    },
  });
  // Up as soon as it is spawned: readiness is whatever line the test waits for.
  const started = part.start();
  const tail = () => part.output.slice(-20).join('\n');
  return {
    output: part.output,
    get pid() {
      return part.pid;
    },
    waitFor(text, timeoutMs = 60_000) {
      if (part.output.some((l) => l.includes(text))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = {
          text,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no "${text}" from ${entry} within ${timeoutMs} ms:\n${tail()}`));
        }, timeoutMs);
        waiters.add(waiter);
        void started.then(
          () =>
            part.exited?.then(() => {
              if (!waiters.delete(waiter)) return;
              clearTimeout(timer);
              reject(new Error(`${entry} exited before printing "${text}":\n${tail()}`));
            }),
          (err: unknown) => {
            waiters.delete(waiter);
            clearTimeout(timer);
            reject(err as Error);
          },
        );
      });
    },
    async kill(signal = 'SIGTERM') {
      await started.catch(() => undefined);
      await part.stop({ signal });
    },
  };
}
