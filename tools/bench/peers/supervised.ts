// Runs a peer's processes under the repository's one supervisor: each ProcessSpec becomes
// a part (its executable and arguments, its user, its stop signal, its readiness probe),
// started in order, each ready (and its afterReady done) before the next, and stopped in
// reverse with the rest of the supervisor's parts.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import type { Part, PartSpec } from '../../supervisor/part.js';
import { freePort } from '../../supervisor/ports.js';
import type { Probe } from '../../supervisor/ready.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { PEER_PORTS, peerStack, type PeerName, type PeerStack, type ProcessSpec, type ReadyProbe } from './index.js';

function tcpAccepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(1_000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

function exitsZero(file: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => execFile(file, args, { timeout: 5_000 }, (err) => resolve(!err)));
}

export function probeOf(ready: ReadyProbe): Probe {
  if ('http' in ready) return (ctx) => ctx.http(ready.http);
  if ('tcp' in ready)
    return (ctx) =>
      ctx.poll(`a TCP accept on ${ready.tcp.host}:${ready.tcp.port}`, () => tcpAccepts(ready.tcp.host, ready.tcp.port));
  return (ctx) =>
    ctx.poll(`\`${[ready.command.file, ...ready.command.args].join(' ')}\` to exit 0`, () =>
      exitsZero(ready.command.file, ready.command.args),
    );
}

export function partSpecOf(spec: ProcessSpec): PartSpec {
  return {
    name: spec.name,
    // The kernel stops it (its own clean stop) if the bench dies without stopping it.
    command: { bin: spec.file, args: spec.args, orphanSignal: spec.stopSignal },
    cwd: spec.cwd,
    env: spec.env,
    // A peer is configured by its spec alone, never by a retrysafe or Temporal setting of ours.
    unsetEnv: [/^TEMPORAL_/, /^RETRYSAFE_/],
    ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}),
    stopSignal: spec.stopSignal,
    stopGraceMs: 15_000,
    ready: probeOf(spec.ready),
    // A first start on a busy machine: restate-server creates its stores, PostgreSQL recovers.
    readyTimeoutMs: 120_000,
    keepLines: 300,
  };
}

export interface SupervisedPeer {
  stack: PeerStack;
  parts: Part[];
}

/**
 * Prepares `peer` (data directory, initdb), starts its processes in order under
 * `supervisor` on free loopback ports, and runs its setup. The caller stops them with
 * the supervisor.
 */
export async function startPeer(
  supervisor: Supervisor,
  peer: PeerName,
  opts: { dataDir: string; bankUrl: string; reservationsUrl: string; logLevel?: string; execArgv?: string[] },
): Promise<SupervisedPeer> {
  const ports: Record<string, number> = {};
  for (const name of PEER_PORTS[peer]) ports[name] = await freePort();
  const stack =
    peer === 'restate'
      ? peerStack('restate', { ...opts, ports: ports as never })
      : peerStack('dbos', { ...opts, ports: ports as never });
  stack.prepare();
  const parts: Part[] = [];
  for (const spec of stack.processes) {
    const part = supervisor.add(partSpecOf(spec));
    parts.push(part);
    await part.start();
    await spec.afterReady?.();
  }
  await stack.setup();
  return { stack, parts };
}
