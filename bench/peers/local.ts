// One peer on this machine with the sandboxes it calls: the bank and the reservation
// service (`node --import tsx downstream/<name>/server.ts`) and the peer's processes, all
// on free loopback ports, under one data directory. For the peers' own scripts
// (measure.ts, try.ts); the bench proper starts the same specs under its supervisor.
import { join } from 'node:path';
import { PEER_PORTS, PEERS_DIR, peerStack, type PeerName, type PeerStack, type ProcessSpec } from './index.js';
import { ensurePeersInstalled } from './install.js';
import { freePort, start, type Running } from './spawn.js';

const ROOT = join(PEERS_DIR, '..', '..');

export interface LocalPeer {
  stack: PeerStack;
  bank: string;
  reservations: string;
  processes: Running[];
  /** Stops every process, the peer's first. */
  stop(): Promise<void>;
}

function sandbox(name: 'bank' | 'reservations', port: number, dataDir: string, logLevel: string): ProcessSpec {
  const prefix = name === 'bank' ? 'BANK' : 'RESERVATIONS';
  return {
    name,
    file: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'downstream', name, 'server.ts')],
    env: {
      [`${prefix}_HOST`]: '127.0.0.1',
      [`${prefix}_PORT`]: String(port),
      [`${prefix}_DB`]: join(dataDir, `${name}.db`),
      LOG_LEVEL: logLevel,
    },
    cwd: ROOT,
    ready: { http: `http://127.0.0.1:${port}/healthz` },
    stopSignal: 'SIGTERM',
  };
}

/**
 * Starts the sandboxes, then `peer` (prepare, its processes in order, setup). On a failure
 * whatever started is stopped again before the error is thrown.
 */
export interface LocalOptions {
  dataDir: string;
  logLevel?: string;
  /** Extra node flags for the peer's Node process. */
  execArgv?: string[];
  /** Runs once the sandboxes answer, before the peer starts (seeding, a baseline). */
  onSandboxesReady?: (urls: { bank: string; reservations: string }) => Promise<void>;
}

export async function startLocal(peer: PeerName, opts: LocalOptions): Promise<LocalPeer> {
  ensurePeersInstalled();
  const logLevel = opts.logLevel ?? 'warn';
  const processes: Running[] = [];
  const stop = async () => {
    for (const part of [...processes].reverse()) {
      await part.stop().catch((err: unknown) => console.error(`${part.name} did not stop: ${String(err)}`));
    }
  };
  try {
    const bankPort = await freePort();
    const reservationsPort = await freePort();
    const bank = `http://127.0.0.1:${bankPort}`;
    const reservations = `http://127.0.0.1:${reservationsPort}`;
    processes.push(await start(sandbox('bank', bankPort, opts.dataDir, logLevel)));
    processes.push(await start(sandbox('reservations', reservationsPort, opts.dataDir, logLevel)));
    await opts.onSandboxesReady?.({ bank, reservations });

    const ports: Record<string, number> = {};
    for (const name of PEER_PORTS[peer]) ports[name] = await freePort();
    const common = {
      dataDir: join(opts.dataDir, peer),
      bankUrl: bank,
      reservationsUrl: reservations,
      logLevel,
      execArgv: opts.execArgv,
    };
    const stack =
      peer === 'restate'
        ? peerStack('restate', { ...common, ports: ports as never })
        : peerStack('dbos', { ...common, ports: ports as never });
    stack.prepare();
    for (const spec of stack.processes) processes.push(await start(spec));
    await stack.setup();
    return { stack, bank, reservations, processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
