// Real processes for tests that kill and restart parts of the stack.
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildHandle {
  process: ResultPromise;
  output: string[];
  /** Resolves once a line containing `text` was printed. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnEntry(entry: string, env: Record<string, string>): ChildHandle {
  // `node --import tsx` keeps it one process: the tsx CLI would fork a child that a
  // SIGKILL of the parent leaves running.
  const child = execa(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { ...process.env, LOG_PRETTY: '0', ...env },
    reject: false,
    cleanup: true,
    buffer: false,
    stdin: 'ignore',
  });
  const output: string[] = [];
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      output.push(line);
      for (const w of waiters.filter((w) => line.includes(w.text))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return {
    process: child,
    output,
    waitFor(text, timeoutMs = 60_000) {
      if (output.some((l) => l.includes(text))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${text}" from ${entry} within ${timeoutMs} ms:\n${output.slice(-20).join('\n')}`)), timeoutMs);
        waiters.push({ text, resolve: () => (clearTimeout(timer), resolve()) });
        void child.then(() => {
          clearTimeout(timer);
          reject(new Error(`${entry} exited before printing "${text}":\n${output.slice(-20).join('\n')}`));
        });
      });
    },
    async kill(signal = 'SIGTERM') {
      child.kill(signal);
      await child;
    },
  };
}
