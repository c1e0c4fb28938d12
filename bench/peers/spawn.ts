// Runs a ProcessSpec with execa for the peers' own measurement script: the spec's
// environment over ours, its user when it has one, stopped with its own signal. The
// bench proper runs the same specs under the project's process supervisor.
import { execFile } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { execa, type ResultPromise } from 'execa';
import type { ProcessSpec, ReadyProbe } from './index.js';

export interface Running {
  name: string;
  pid: number;
  output: string[];
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

export async function probe(ready: ReadyProbe): Promise<boolean> {
  if ('http' in ready) {
    const res = await fetch(ready.http, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
    return res !== undefined && res.ok;
  }
  if ('tcp' in ready) {
    return new Promise((resolve) => {
      const socket = connect(ready.tcp.port, ready.tcp.host);
      socket.setTimeout(1_000);
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => (socket.destroy(), resolve(false)));
    });
  }
  return new Promise((resolve) => execFile(ready.command.file, ready.command.args, { timeout: 5_000 }, (err) => resolve(!err)));
}

export async function start(spec: ProcessSpec, timeoutMs = 60_000): Promise<Running> {
  const child: ResultPromise = execa(spec.file, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    extendEnv: false,
    ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}),
    killSignal: spec.stopSignal,
    forceKillAfterDelay: 15_000,
    cleanup: true,
    reject: false,
    buffer: false,
    stdin: 'ignore',
  });
  const output: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) output.push(line);
    if (output.length > 300) output.splice(0, output.length - 300);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exited: string | undefined;
  const done = child.then((r) => {
    exited = r.signal ?? `code ${r.exitCode}`;
  });

  const deadline = Date.now() + timeoutMs;
  while (!(await probe(spec.ready))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      await done;
      throw new Error(
        `${spec.name} ${exited ? `exited (${exited})` : `not ready within ${timeoutMs} ms`}:\n${output.slice(-20).join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await spec.afterReady?.();
  return {
    name: spec.name,
    pid: child.pid!,
    output,
    async stop() {
      if (exited) return;
      child.kill(spec.stopSignal);
      await done;
    },
  };
}
