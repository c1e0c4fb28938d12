// A multi-process Temporal cluster on one machine, described as data for a supervisor:
// PostgreSQL (persistence and visibility), then a frontend, a matching service, two
// history services and the internal worker service as separate OS processes, and the Web
// UI server. `defineCluster` starts nothing and writes nothing: it says what to run and
// how to tell that it is ready; the one-off set-up steps (build, initdb, config, schema,
// namespace) are listed with the point at which each can run.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDatabase, initPostgres, postgresCommand, postgresUrl } from '../postgres.js';
import { ensureTemporalServer, ensureUiServer, temporalServerBinaries, uiServerBinary } from './build.js';
import { dynamicConfig, serverConfig, uiConfig, writeJson, type ServerLogLevel, type TemporalRole } from './config.js';
import { grpcServing, HEALTH_SERVICE, httpOk, postgresAccepting } from './health.js';
import { ensureNamespace } from './namespace.js';
import { blockPorts, portUses, type ClusterPorts, type PortUse, type TemporalProcessPorts } from './ports.js';
import { ensureSchema } from './schema.js';
import type { PartSpec } from '../supervisor/part.js';

/**
 * 16 shards: a shard is the unit a history process owns, so the count bounds how evenly
 * history processes share the load and how many can usefully run (two here, room for a
 * few more) and it can never change once the database exists. More shards cost more at
 * every start and every failover (each one is acquired, fenced and loaded on its own),
 * and more idle queue polling, which a 2-core machine feels; one shard would put every
 * workflow behind a single queue processor, as the embedded dev server does.
 */
export const DEFAULT_HISTORY_SHARDS = 16;

/** The database of the API instances' shared rate windows (RETRYSAFE_LIMITS_URL), beside Temporal's two. */
export const LIMITS_DATABASE = 'retrysafe_limits';

export interface ClusterOptions {
  /** Repository root: the binaries are built into `<root>/.tools`. */
  root: string;
  /** Everything the cluster keeps: `postgres/` (the database), `temporal/` and `ui/` (generated config). */
  dataDir: string;
  /** The frontend's gRPC port; the other ports follow it (see ports.ts). Default 7233. */
  basePort?: number;
  /** Overrides the whole layout (e.g. ports found free one by one). */
  ports?: ClusterPorts;
  historyCount?: number;
  numHistoryShards?: number;
  namespace?: string;
  /** Namespace retention: how long a finished operation's key is remembered. Default 7 d. */
  retentionMs?: number;
  /** The server processes' log level (they log JSON lines to stdout). Default warn. */
  logLevel?: ServerLogLevel;
  /** Start the Web UI server too. Default true. */
  ui?: boolean;
}

export interface ReadyCheck {
  /** What is awaited, for a message when it times out. */
  description: string;
  /** One probe; the supervisor polls it until true. */
  check(): Promise<boolean>;
}

export type ClusterRole = 'postgres' | TemporalRole | 'ui';

/**
 * A process of the cluster, in the supervisor's own terms where they apply (its name, the
 * environment added to the supervisor's, where and as whom it runs, how it stops), all
 * given here. How to stop it cleanly: PostgreSQL gets SIGINT, its "fast" shutdown (SIGTERM
 * would wait for every client to disconnect); the Temporal services drain on SIGTERM (a
 * history process hands its shards over), which needs a grace period.
 */
export interface ClusterProcess
  extends Pick<PartSpec, 'name' | 'uid' | 'gid'>, Required<Pick<PartSpec, 'cwd' | 'env' | 'stopSignal' | 'stopGraceMs'>> {
  role: ClusterRole;
  /** The binary and its arguments. */
  file: string;
  args: string[];
  /** State the process owns on disk, if any (the Temporal services keep theirs in PostgreSQL). */
  dataDir?: string;
  ports: PortUse[];
  /** Names of the processes that must be ready before this one starts. */
  after: string[];
  ready: ReadyCheck;
}

/** When a set-up step can run: before anything starts, once PostgreSQL is ready, or once the whole cluster is. */
export type SetupPhase = 'before-start' | 'postgres-ready' | 'cluster-ready';

export interface SetupStep {
  name: string;
  phase: SetupPhase;
  /** Idempotent: a second run on the same data finds everything done and says so. */
  run(): Promise<string>;
}

export interface ClusterDefinition {
  /** In start order; stop in reverse. */
  processes: ClusterProcess[];
  setup: SetupStep[];
  ports: ClusterPorts;
  /** What clients put in TEMPORAL_ADDRESS. */
  frontendAddress: string;
  namespace: string;
  uiUrl: string | undefined;
  dataDir: string;
  /** For the project's processes that use this cluster (API, worker). */
  clientEnv: Record<string, string>;
  /** Where the API instances keep the tenants' rate windows: this cluster's PostgreSQL. */
  limitsUrl: string;
}

const HOUR = 3_600_000;

export function defineCluster(opts: ClusterOptions): ClusterDefinition {
  const root = resolve(opts.root);
  const dataDir = resolve(opts.dataDir);
  const historyCount = opts.historyCount ?? 2;
  const ports = opts.ports ?? blockPorts(opts.basePort ?? 7233, historyCount);
  if (ports.history.length !== historyCount)
    throw new Error(`ports name ${ports.history.length} history processes, not ${historyCount}`);
  const namespace = opts.namespace ?? 'default';
  const retentionMs = opts.retentionMs ?? 7 * 24 * HOUR;
  const withUi = opts.ui ?? true;
  const pgDir = join(dataDir, 'postgres');
  const temporalDir = join(dataDir, 'temporal');
  const uiDir = join(dataDir, 'ui');
  const frontendAddress = `127.0.0.1:${ports.frontend.grpc}`;
  const bins = temporalServerBinaries(root);
  const ui = uiServerBinary(root);
  const pgOptions = { dataDir: pgDir, port: ports.postgres };
  const historyNames = ports.history.map((_, i) => `temporal-history-${i + 1}`);
  const uses = portUses(ports, { history: historyNames });
  const configInput = {
    ports,
    numHistoryShards: opts.numHistoryShards ?? DEFAULT_HISTORY_SHARDS,
    logLevel: opts.logLevel ?? 'warn',
    dynamicConfigFile: join(temporalDir, 'dynamicconfig.yaml'),
  };

  const pg = postgresCommand(pgOptions);
  const postgres: ClusterProcess = {
    name: 'postgres',
    role: 'postgres',
    file: pg.file,
    args: pg.args,
    env: {},
    cwd: pgDir,
    ...(pg.uid !== undefined ? { uid: pg.uid, gid: pg.gid } : {}),
    dataDir: pgDir,
    ports: uses.filter((u) => u.part === 'postgres'),
    after: [],
    ready: {
      description: `PostgreSQL to accept connections on 127.0.0.1:${ports.postgres}`,
      check: () => postgresAccepting(ports.postgres),
    },
    stopSignal: 'SIGINT',
    stopGraceMs: 30_000,
  };

  const temporal = (name: string, role: TemporalRole, own: TemporalProcessPorts, after: string[]): ClusterProcess => ({
    name,
    role,
    file: bins.server,
    args: ['--config-file', join(temporalDir, `${name}.yaml`), '--allow-no-auth', 'start', '--service', role],
    env: {},
    cwd: temporalDir,
    ports: uses.filter((u) => u.part === name),
    after,
    ready: {
      description: `${role} on 127.0.0.1:${own.grpc} to report SERVING`,
      check: () => grpcServing(`127.0.0.1:${own.grpc}`, HEALTH_SERVICE[role]),
    },
    stopSignal: 'SIGTERM',
    stopGraceMs: 30_000,
  });

  // History and matching need only the database; the frontend routes to them; the worker
  // service runs its system workflows through the frontend. Matching starts first and
  // alone: the first process on an empty database writes the cluster's metadata record,
  // and two doing it at once race on its primary key (the loser exits). Matching is the
  // quickest to be ready (~2 s); the history processes then find the record and only read it.
  const matching = temporal('temporal-matching', 'matching', ports.matching, ['postgres']);
  const backends = [
    matching,
    ...ports.history.map((p, i) => temporal(historyNames[i]!, 'history', p, ['postgres', matching.name])),
  ];
  const frontend = temporal(
    'temporal-frontend',
    'frontend',
    ports.frontend,
    backends.map((b) => b.name),
  );
  const worker = temporal('temporal-worker', 'worker', ports.worker, [frontend.name]);
  const processes = [postgres, ...backends, frontend, worker];

  const uiUrl = `http://127.0.0.1:${ports.ui}`;
  if (withUi) {
    processes.push({
      name: 'temporal-ui',
      role: 'ui',
      file: ui.uiServer,
      args: ['--root', uiDir, '--config', 'config', '--env', 'cluster', 'start'],
      env: {},
      cwd: uiDir,
      ports: uses.filter((u) => u.part === 'temporal-ui'),
      after: [frontend.name],
      ready: { description: `GET ${uiUrl}/ to answer 200`, check: () => httpOk(`${uiUrl}/`) },
      stopSignal: 'SIGTERM',
      stopGraceMs: 5_000,
    });
  }

  const setup: SetupStep[] = [
    {
      name: 'build temporal-server',
      phase: 'before-start',
      async run() {
        const r = await ensureTemporalServer(root);
        return r.built ? `built v${r.version} in ${(r.ms / 1000).toFixed(0)} s` : `v${r.version} already built`;
      },
    },
    ...(withUi
      ? [
          {
            name: 'build temporal-ui-server',
            phase: 'before-start' as const,
            async run() {
              const r = await ensureUiServer(root);
              return r.built ? `built v${r.version} in ${(r.ms / 1000).toFixed(0)} s` : `v${r.version} already built`;
            },
          },
        ]
      : []),
    {
      name: 'initdb',
      phase: 'before-start',
      run() {
        const existed = existsSync(join(pgDir, 'PG_VERSION'));
        initPostgres(pgOptions);
        return Promise.resolve(existed ? `${pgDir} exists` : `created ${pgDir}`);
      },
    },
    {
      name: 'config',
      phase: 'before-start',
      run() {
        for (const p of processes) {
          if (p.role === 'postgres' || p.role === 'ui') continue;
          const own = p.role === 'history' ? ports.history[historyNames.indexOf(p.name)]! : ports[p.role];
          writeJson(join(temporalDir, `${p.name}.yaml`), serverConfig(configInput, p.role, own));
        }
        writeJson(configInput.dynamicConfigFile, dynamicConfig());
        if (withUi) writeJson(join(uiDir, 'config', 'cluster.yaml'), uiConfig(ports, namespace));
        return Promise.resolve(`wrote ${temporalDir}`);
      },
    },
    {
      name: 'schema',
      phase: 'postgres-ready',
      async run() {
        const results = await ensureSchema(bins.sqlTool, ports.postgres);
        return results.map((r) => `${r.database} ${r.created ? 'created at' : 'at'} v${r.version}`).join(', ');
      },
    },
    {
      name: 'limits database',
      phase: 'postgres-ready',
      run() {
        ensureDatabase(ports.postgres, LIMITS_DATABASE);
        return Promise.resolve(`${LIMITS_DATABASE} for the API instances' rate windows`);
      },
    },
    {
      name: 'namespace',
      phase: 'cluster-ready',
      async run() {
        const r = await ensureNamespace(frontendAddress, namespace, retentionMs);
        const what = [
          r.registered ? 'registered' : 'exists',
          r.added.length ? `added ${r.added.join(', ')}` : 'search attributes present',
        ];
        return `${namespace}: ${what.join(', ')}, retention ${r.retentionSeconds} s`;
      },
    },
  ];

  return {
    processes,
    setup,
    ports,
    frontendAddress,
    namespace,
    uiUrl: withUi ? uiUrl : undefined,
    dataDir,
    limitsUrl: postgresUrl(ports.postgres, LIMITS_DATABASE),
    clientEnv: {
      TEMPORAL_ADDRESS: frontendAddress,
      TEMPORAL_NAMESPACE: namespace,
      ...(withUi ? { TEMPORAL_UI_URL: uiUrl } : {}),
    },
  };
}
