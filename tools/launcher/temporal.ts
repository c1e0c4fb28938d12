// Temporal for `npm start`: the embedded dev server on the data dir's SQLite file, run by
// tools/dev-server.ts as the first part of the stack (restarted after a crash on the same
// file); with --cluster (`npm run cluster`), the multi-process cluster on PostgreSQL of
// tools/cluster, each of its processes a part of the same supervisor; or, with
// TEMPORAL_ADDRESS set, an existing cluster, which the launcher prepares (search
// attributes, retention) but never starts or stops.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../../common/namespace-setup.js';
import { StartError } from '../supervisor/ready.js';
import { RESTART_WITH_BACKOFF, type Supervisor } from '../supervisor/supervisor.js';
import { loadTemporalSettings } from '../../common/temporal.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import { temporalServerBinaries, uiServerBinary, TEMPORAL_SERVER_VERSION, TEMPORAL_UI_SERVER_VERSION } from '../cluster/build.js';
import { defineCluster, type ClusterDefinition } from '../cluster/cluster.js';
import { blockPorts } from '../cluster/ports.js';
import { superviseCluster, type SupervisedCluster } from '../cluster/supervise.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';

export interface StackTemporal {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** The dev server, when the launcher runs one. */
  server: DevServer | undefined;
  /** The cluster, when the launcher runs one. */
  cluster?: SupervisedCluster;
  /** A new connection to it (with the cluster's credentials when it is external). */
  connect(): Promise<Connection>;
}

/** The cluster `--cluster` runs: the frontend on TEMPORAL_PORT, the UI on TEMPORAL_UI_PORT, its files in the data dir. */
export function clusterDefinition(config: LauncherConfig): ClusterDefinition {
  const target = config.temporal;
  if (target.mode !== 'cluster') throw new Error('not a cluster configuration');
  return defineCluster({
    root: config.root,
    dataDir: config.dataDir,
    ports: { ...blockPorts(target.port), ui: target.uiPort },
    retentionMs: config.retentionMs,
  });
}

export async function startTemporal(
  config: LauncherConfig,
  output: Output,
  supervisor: Supervisor,
  opts: { signal: AbortSignal; onSpawn: (pid: number) => void },
): Promise<StackTemporal> {
  const target = config.temporal;
  if (target.mode === 'cluster') return startCluster(config, output, supervisor, opts.signal);
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

async function startCluster(
  config: LauncherConfig,
  output: Output,
  supervisor: Supervisor,
  signal: AbortSignal,
): Promise<StackTemporal> {
  const definition = clusterDefinition(config);
  if (!existsSync(temporalServerBinaries(config.root).server))
    output.info(`building temporal-server v${TEMPORAL_SERVER_VERSION} with go install (first time only: a few minutes)`);
  if (!existsSync(uiServerBinary(config.root).uiServer))
    output.info(`building temporal-ui-server v${TEMPORAL_UI_SERVER_VERSION} with go install (first time only: a few minutes)`);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  // The servers' own output goes to one log file per process (named in the banner), not to
  // the terminal: six processes logging shard moves and peers' restarts would drown the
  // stack's own lines. What the supervisor does with them (started, ready, crashed,
  // restarted) is printed as for every part.
  const cluster = await superviseCluster(definition, {
    supervisor,
    restart: RESTART_WITH_BACKOFF,
    // A history process answers only once it owns its shards, then settles for 5 s.
    readyTimeoutMs: Math.max(config.startTimeoutMs, 120_000),
    signal,
    onStep: (step, { note, ms }) => {
      if (note !== undefined) output.info(`${step.name}: ${note} (${seconds(ms ?? 0)})`);
    },
    onStarting: (p) => output.info(`starting ${p.name}`),
    onReady: (p, ms) => output.info(`${p.name} ready (${seconds(ms)})`),
  });
  return {
    address: definition.frontendAddress,
    namespace: definition.namespace,
    uiUrl: definition.uiUrl?.replace('127.0.0.1', 'localhost'),
    server: undefined,
    cluster,
    connect: () => Connection.connect({ address: definition.frontendAddress, connectTimeout: 5_000 }),
  };
}
