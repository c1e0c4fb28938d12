// The Temporal server's configuration, one file per process from one template. The
// template follows the module's own development-postgres12.yaml (PostgreSQL for
// persistence and visibility, membership on loopback); what differs between processes is
// only which service it runs and its four ports. Files are written as JSON, which every
// YAML parser (the server's included) reads as YAML, so no YAML library is needed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterPorts, TemporalProcessPorts } from './ports.js';

export type TemporalRole = 'frontend' | 'history' | 'matching' | 'worker';
export type ServerLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The role the services log in as; it owns both databases. */
export const TEMPORAL_DB_USER = 'temporal';

/**
 * The server's two stores, each a database of its own: the name the server's config gives
 * it, the database, and the schema the SQL tool sets up in it (schema.ts).
 */
export const STORES = {
  main: { name: 'postgres-default', database: 'temporal', schema: 'postgresql/v12/temporal' },
  visibility: { name: 'postgres-visibility', database: 'temporal_visibility', schema: 'postgresql/v12/visibility' },
} as const;
type Store = keyof typeof STORES;

export interface ServerConfigInput {
  ports: ClusterPorts;
  /** Fixed when the cluster's database is created: it can never change afterwards. */
  numHistoryShards: number;
  logLevel: ServerLogLevel;
  /** The dynamic config file every process polls (tunable on a live cluster). */
  dynamicConfigFile: string;
}

/**
 * Connection pools per process and store. Each process keeps its own pools, so the sum
 * over the cluster (2×(20+5) + 10+5 + 10+10 + 5+5 = 95) must stay under PostgreSQL's
 * max_connections (200): history writes every state transition, the frontend answers
 * visibility queries (list, count), the worker service runs a few system workflows.
 */
const POOLS: Record<TemporalRole, Record<Store, number>> = {
  history: { main: 20, visibility: 5 },
  matching: { main: 10, visibility: 5 },
  frontend: { main: 10, visibility: 10 },
  worker: { main: 5, visibility: 5 },
};

function datastore(port: number, database: string, conns: number) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `127.0.0.1:${port}`,
      connectProtocol: 'tcp',
      user: TEMPORAL_DB_USER,
      // PostgreSQL trusts loopback connections of this private cluster (see tools/postgres.ts).
      password: '',
      maxConns: conns,
      maxIdleConns: conns,
      maxConnLifetime: '1h',
    },
  };
}

function rpc(p: TemporalProcessPorts, extra: Record<string, number> = {}) {
  return { rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnLocalHost: true, ...extra } };
}

/**
 * The config of one process: `role`, with `own` as its ports (one of the history entries
 * for a history process). Every file lists all four services because a process reads
 * other roles' entries too (the frontend's HTTP port, the keepalive settings of the
 * service it calls); where peers are, though, comes from membership, not from these
 * ports, which is how a second history process (or frontend) is found at all.
 */
export function serverConfig(input: ServerConfigInput, role: TemporalRole, own: TemporalProcessPorts) {
  const { ports } = input;
  const frontendAddress = `127.0.0.1:${ports.frontend.grpc}`;
  const pools = POOLS[role];
  return {
    log: { stdout: true, level: input.logLevel },
    persistence: {
      defaultStore: STORES.main.name,
      visibilityStore: STORES.visibility.name,
      numHistoryShards: input.numHistoryShards,
      datastores: Object.fromEntries(
        (Object.keys(STORES) as Store[]).map((store) => [
          STORES[store].name,
          datastore(ports.postgres, STORES[store].database, pools[store]),
        ]),
      ),
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: own.pprof },
      metrics: {
        prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${own.metrics}` },
      },
    },
    services: {
      frontend: rpc(role === 'frontend' ? own : ports.frontend, { httpPort: ports.frontend.http }),
      history: rpc(role === 'history' ? own : ports.history[0]!),
      matching: rpc(ports.matching),
      worker: rpc(ports.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontendAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * Dynamic config: only what the project needs to differ from the server's defaults, the
 * same behaviour the embedded server is started with (tools/dev-server.ts) but none of
 * its one-machine speed tuning. An operator (or a chaos run) can tune a live cluster here,
 * since every process re-reads the file every 10 s. Each key holds a list of values, each
 * with optional constraints (namespace, task queue); none here is constrained.
 */
export function dynamicConfig(): Record<string, { value: unknown }[]> {
  return {
    // Task queues dispatch per fairness key (the API starts each operation with its tenant
    // as the key), so one tenant's flood cannot starve another's operations. Off by default.
    'matching.enableFairness': [{ value: true }],
    // How soon a build that stopped being current is seen drained (its pinned operations all
    // closed): after a grace period for visibility to catch up, then at each refresh. Both are
    // 3 minutes by default; a rehearsal of a roll should see it within a minute.
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod': [{ value: '30s' }],
    'matching.wv.VersionDrainageStatusRefreshInterval': [{ value: '10s' }],
  };
}

/** The Web UI server's config: loopback only, pointed at the frontend. */
export function uiConfig(ports: ClusterPorts, namespace: string) {
  return {
    temporalGrpcAddress: `127.0.0.1:${ports.frontend.grpc}`,
    host: '127.0.0.1',
    port: ports.ui,
    enableUi: true,
    defaultNamespace: namespace,
    // No calls out of the machine: the UI otherwise fetches a news feed and version notices.
    disableNewsFetch: true,
    notifyOnNewVersion: false,
    distribution: 'server',
  };
}

export function writeJson(file: string, value: unknown): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}
