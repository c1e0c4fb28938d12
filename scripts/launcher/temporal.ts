// The engine part of the stack: the embedded Temporal dev server (SQLite file in the data
// dir) or, when TEMPORAL_ADDRESS is set, an existing cluster. Either way the namespace is
// prepared the same way (search attributes, retention) before anything else starts.
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../common/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../../common/namespace-setup.js';
import { loadTemporalSettings } from '../../common/temporal.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';
import { addressInUse } from './ports.js';
import { AbortedError, StartError, type ExitInfo, type Part } from './service.js';

export interface TemporalPart extends Part {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  embedded: boolean;
  /** The dev server's process id (embedded only). */
  pid: number | undefined;
  /** Open while the stack starts (the worker's readiness probe uses it). */
  connection: Connection;
  /** Closes `connection`; idempotent. */
  closeConnection(): Promise<void>;
}

function closer(get: () => Connection | undefined): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= get()?.close().catch(() => undefined) ?? Promise.resolve());
}

/** The variables that pick a cluster; dropped for children when the dev server is used. */
export const TEMPORAL_CONNECTION_VARS = [
  'TEMPORAL_API_KEY',
  'TEMPORAL_PROFILE',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
];

export async function startTemporal(
  config: LauncherConfig,
  output: Output,
  signal: AbortSignal,
): Promise<TemporalPart> {
  const target = config.temporal;
  if (target.mode === 'external') {
    const settings = loadTemporalSettings();
    let connection: Connection;
    try {
      connection = await Connection.connect({ ...settings.connectionOptions, connectTimeout: 10_000 });
    } catch (err) {
      throw new StartError('temporal', `cannot reach ${settings.address}: ${(err as Error).message}`);
    }
    let closed = false;
    const closeConnection = closer(() => {
      closed = true;
      return connection;
    });
    try {
      await prepareNamespace(connection, settings.namespace, config.retentionMs);
    } catch (err) {
      await closeConnection();
      throw err;
    }
    const never = new Promise<ExitInfo>(() => undefined);
    return {
      name: 'temporal',
      address: settings.address,
      namespace: settings.namespace,
      uiUrl: target.uiUrl,
      embedded: false,
      pid: undefined,
      connection,
      closeConnection,
      exited: never,
      // Not ours to stop: once the connection is closed there is nothing left to do.
      running: () => !closed,
      stop: closeConnection,
      kill: () => undefined,
    };
  }

  let bin: string;
  try {
    bin = ensureTemporalCli();
  } catch (err) {
    throw new StartError('temporal', (err as Error).message);
  }
  let portConflict: { port?: number } | undefined;
  // While it shuts down, the dev server's internal workers warn about the connections it is
  // closing itself: expected, and noise.
  let stopping = false;
  const starting = startDevServer({
    bin,
    dbFile: join(config.dataDir, 'temporal.db'),
    ip: target.host,
    port: target.port,
    uiPort: target.uiPort,
    logLevel: 'warn',
    readyTimeoutMs: config.startTimeoutMs,
    detached: true,
    onOutput: (line) => {
      if (stopping && /\blevel=(WARN|INFO|DEBUG)\b/.test(line)) return;
      output.child('temporal', line);
      portConflict ??= addressInUse(line);
    },
  });
  let server: DevServer;
  try {
    server = await raceAbort(starting, signal);
  } catch (err) {
    if (err instanceof AbortedError) {
      // It cannot be stopped before it is up; stop it as soon as it is.
      stopping = true;
      await starting.then((s) => s.stop(), () => undefined);
      throw err;
    }
    const reason = portConflict
      ? `port ${portConflict.port ?? target.port} is already in use`
      : (err as Error).message.replace(/^temporal dev server /, '');
    throw new StartError('temporal', reason);
  }

  let alive = true;
  const exited = server.process.then((r) => {
    alive = false;
    return { code: r.exitCode, signal: r.signal } satisfies ExitInfo;
  });
  const part: TemporalPart = {
    name: 'temporal',
    address: server.address,
    namespace: target.namespace,
    uiUrl: `http://localhost:${target.uiPort}`,
    embedded: true,
    pid: server.process.pid,
    connection: undefined as unknown as Connection,
    closeConnection: closer(() => part.connection as Connection | undefined),
    exited,
    running: () => alive,
    async stop() {
      await part.closeConnection();
      stopping = true;
      if (alive) await server.stop(); // SIGTERM: the server closes its SQLite file
    },
    kill: () => {
      if (alive) server.process.kill('SIGKILL');
    },
  };
  try {
    part.connection = await Connection.connect({ address: server.address, connectTimeout: 5_000 });
    await prepareNamespace(part.connection, target.namespace, config.retentionMs);
  } catch (err) {
    await part.stop();
    if (err instanceof StartError) throw err;
    throw new StartError('temporal', (err as Error).message);
  }
  return part;
}

async function prepareNamespace(connection: Connection, namespace: string, retentionMs: number): Promise<void> {
  try {
    await setupNamespace(connection, namespace, { retentionMs });
    await waitForSearchAttributes(connection, namespace);
  } catch (err) {
    throw new StartError('temporal', `could not prepare namespace ${namespace}: ${(err as Error).message}`);
  }
}

export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
