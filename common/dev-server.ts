// Runs `temporal server start-dev` as a supervised child process (execa) with a SQLite
// file, waits until its frontend answers, and stops it with SIGTERM so SQLite is closed
// cleanly. Used by `npm start`, the test suite's global setup and the chaos/bench runs.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';

export interface DevServerOptions {
  bin: string;
  /** SQLite file for persistence; omit for an in-memory server (tests only). */
  dbFile?: string;
  ip?: string;
  port: number;
  uiPort?: number;
  /** Disable the Web UI. */
  headless?: boolean;
  namespace?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Where the server's own output goes; defaults to being discarded. */
  onOutput?: (line: string) => void;
  readyTimeoutMs?: number;
  /**
   * Own process group: a terminal's Ctrl-C then reaches only the supervisor, which stops
   * the server last, after the processes that use it.
   */
  detached?: boolean;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ResultPromise;
  stop(): Promise<void>;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(opts.port), '--log-level', opts.logLevel ?? 'warn'];
  args.push('--namespace', opts.namespace ?? 'default');
  if (opts.dbFile) {
    mkdirSync(dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  if (opts.headless) args.push('--headless');
  else if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));

  const child = execa(opts.bin, args, {
    cleanup: true,
    detached: opts.detached ?? false,
    forceKillAfterDelay: 10_000,
    killSignal: 'SIGTERM',
    reject: false,
    stdin: 'ignore',
    buffer: false,
    lines: true,
  });
  const forward = (stream: NodeJS.ReadableStream | null) => {
    if (!stream || !opts.onOutput) return;
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) opts.onOutput!(line);
    });
  };
  forward(child.stdout);
  forward(child.stderr);

  let exited: string | undefined;
  // execa's cleanup does not cover a detached child: stop it if this process exits first.
  if (opts.detached) {
    const killOnExit = () => {
      if (!exited) child.kill('SIGTERM');
    };
    process.once('exit', killOnExit);
    void child.finally(() => process.off('exit', killOnExit));
  }
  void child.then((r) => {
    exited = `temporal dev server exited (${r.signal ?? `code ${r.exitCode}`})`;
  });

  const address = `${ip}:${opts.port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) throw new Error(exited);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: opts.namespace ?? 'default' });
        break;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server not ready at ${address}: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  return {
    address,
    uiUrl: opts.headless ? undefined : `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${opts.uiPort ?? opts.port + 1000}`,
    process: child,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      await child;
    },
  };
}
