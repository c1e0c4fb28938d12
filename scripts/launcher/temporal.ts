// Temporal for `npm start`: the embedded dev server on the data dir's SQLite file, run by
// common/dev-server.ts as the first part of the stack (restarted after a crash on the same
// file); or, with TEMPORAL_ADDRESS set, an existing cluster, which the launcher prepares
// (search attributes, retention) but never starts or stops.
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../common/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../../common/namespace-setup.js';
import { StartError } from '../../common/supervisor/ready.js';
import { RESTART_WITH_BACKOFF, type Supervisor } from '../../common/supervisor/supervisor.js';
import { loadTemporalSettings } from '../../common/temporal.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';

export interface StackTemporal {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** The dev server, when the launcher runs one. */
  server: DevServer | undefined;
  /** A new connection to it (with the cluster's credentials when it is external). */
  connect(): Promise<Connection>;
}

export async function startTemporal(
  config: LauncherConfig,
  output: Output,
  supervisor: Supervisor,
  opts: { signal: AbortSignal; onSpawn: (pid: number) => void },
): Promise<StackTemporal> {
  const target = config.temporal;
  if (target.mode === 'external') {
    const settings = loadTemporalSettings();
    const connect = () => Connection.connect({ ...settings.connectionOptions, connectTimeout: 10_000 });
    let connection: Connection;
    try {
      connection = await connect();
    } catch (err) {
      throw new StartError('temporal', `cannot reach ${settings.address}: ${(err as Error).message}`);
    }
    try {
      await setupNamespace(connection, settings.namespace, { retentionMs: config.retentionMs });
      await waitForSearchAttributes(connection, settings.namespace);
    } catch (err) {
      throw new StartError('temporal', `could not prepare namespace ${settings.namespace}: ${(err as Error).message}`);
    } finally {
      await connection.close().catch(() => undefined);
    }
    return { address: settings.address, namespace: settings.namespace, uiUrl: target.uiUrl, server: undefined, connect };
  }

  let bin: string;
  try {
    bin = ensureTemporalCli();
  } catch (err) {
    throw new StartError('temporal', (err as Error).message);
  }
  const server = await startDevServer({
    bin,
    dbFile: join(config.dataDir, 'temporal.db'),
    ip: target.host,
    port: target.port,
    uiPort: target.uiPort,
    namespace: target.namespace,
    retentionMs: config.retentionMs,
    logLevel: 'warn',
    readyTimeoutMs: config.startTimeoutMs,
    stopGraceMs: config.stopGraceMs,
    detached: true,
    supervisor,
    restart: RESTART_WITH_BACKOFF,
    signal: opts.signal,
    onSpawn: opts.onSpawn,
    onOutput: (line) => {
      // While it shuts down, the dev server's internal workers warn about the connections
      // it is closing itself: expected, and noise.
      const stopping = supervisor.parts.find((p) => p.name === 'temporal')?.stopping;
      if (stopping && /\blevel=(WARN|INFO|DEBUG)\b/.test(line)) return;
      output.child('temporal', line);
    },
  });
  return {
    address: server.address,
    namespace: target.namespace,
    uiUrl: `http://localhost:${target.uiPort}`,
    server,
    connect: () => Connection.connect({ address: server.address, connectTimeout: 5_000 }),
  };
}
