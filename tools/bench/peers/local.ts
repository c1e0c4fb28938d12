// One peer on this machine with the sandboxes it calls: the bank and the reservation
// service (`node --import tsx downstream/<name>/server.ts`) and the peer's processes, all
// on free loopback ports, under one data directory and the repository's one supervisor.
// For the peers' own scripts (measure.ts, try.ts); the bench proper starts the same
// specs next to its own stack (./supervised.ts).
import { join } from 'node:path';
import { httpProbe } from '../../supervisor/ready.js';
import { freePort } from '../../supervisor/ports.js';
import { Supervisor } from '../../supervisor/supervisor.js';
import { PEERS_DIR, type PeerName, type PeerStack } from './index.js';
import { ensurePeersInstalled } from './install.js';
import { startPeer } from './supervised.js';

const ROOT = join(PEERS_DIR, '..', '..');

export interface LocalPeer {
  stack: PeerStack;
  bank: string;
  reservations: string;
  /** Every process started, in start order. */
  processes: Array<{ name: string; pid: number }>;
  /** Stops every process, the peer's first. */
  stop(): Promise<void>;
}

export interface LocalOptions {
  dataDir: string;
  logLevel?: string;
  /** Extra node flags for the peer's Node process. */
  execArgv?: string[];
  /** Runs once the sandboxes answer, before the peer starts (seeding, a baseline). */
  onSandboxesReady?: (urls: { bank: string; reservations: string }) => Promise<void>;
}

/**
 * Starts the sandboxes, then `peer` (prepare, its processes in order, setup). On a failure
 * whatever started is stopped again before the error is thrown.
 */
export async function startLocal(peer: PeerName, opts: LocalOptions): Promise<LocalPeer> {
  ensurePeersInstalled();
  const logLevel = opts.logLevel ?? 'warn';
  const supervisor = new Supervisor();
  const stop = () => supervisor.stopAll();
  try {
    const sandbox = async (name: 'bank' | 'reservations') => {
      const port = await freePort();
      const prefix = name === 'bank' ? 'BANK' : 'RESERVATIONS';
      const url = `http://127.0.0.1:${port}`;
      await supervisor
        .add({
          name,
          command: { entry: join(ROOT, 'downstream', name, 'server.ts') },
          env: {
            [`${prefix}_HOST`]: '127.0.0.1',
            [`${prefix}_PORT`]: String(port),
            [`${prefix}_DB`]: join(opts.dataDir, `${name}.db`),
            LOG_LEVEL: logLevel,
          },
          ready: httpProbe(`${url}/healthz`),
        })
        .start();
      return url;
    };
    const bank = await sandbox('bank');
    const reservations = await sandbox('reservations');
    await opts.onSandboxesReady?.({ bank, reservations });
    const { stack } = await startPeer(supervisor, peer, {
      dataDir: join(opts.dataDir, peer),
      bankUrl: bank,
      reservationsUrl: reservations,
      logLevel,
      execArgv: opts.execArgv,
    });
    const processes = supervisor.parts.map((p) => ({ name: p.name, pid: p.pid! }));
    return { stack, bank, reservations, processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
