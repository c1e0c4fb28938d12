// A multi-process Temporal cluster on one machine, described as data for a supervisor:
// PostgreSQL (persistence and visibility), then a frontend, a matching service, two
// history services and the internal worker service as separate OS processes, and the Web
// UI server. `defineCluster` starts nothing and writes nothing: it says what to run and
// how to tell that it is ready; the one-off set-up steps (build, initdb, config, schema,
// namespace) are listed with the point at which each can run.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDatabase, initPostgres, postgresCommand, postgresUrl } from '../postgres.js';
import { ensureTemporalServer, ensureUiServer, temporalServerBinaries, uiServerBinary, type BuildResult } from './build.js';
import {
  dynamicConfig,
  serverConfig,
  uiConfig,
  writeJson,
  type ServerConfigInput,
  type ServerLogLevel,
  type TemporalRole,
} from './config.js';
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

/** Where everything of one cluster is, worked out once from its options. */
interface Layout {
  root: string;
  dataDir: string;
  ports: ClusterPorts;
  namespace: string;
  retentionMs: number;
  withUi: boolean;
  pgDir: string;
  temporalDir: string;
  uiDir: string;
  frontendAddress: string;
  uiUrl: string;
  bins: ReturnType<typeof temporalServerBinaries>;
  pgOptions: { dataDir: string; port: number };
  historyNames: string[];
  uses: PortUse[];
  configInput: ServerConfigInput;
}

function layoutOf(opts: ClusterOptions): Layout {
  const dataDir = resolve(opts.dataDir);
  const historyCount = opts.historyCount ?? 2;
  const ports = opts.ports ?? blockPorts(opts.basePort ?? 7233, historyCount);
  if (ports.history.length !== historyCount)
    throw new Error(`ports name ${ports.history.length} history processes, not ${historyCount}`);
  const historyNames = ports.history.map((_, i) => `temporal-history-${i + 1}`);
  const temporalDir = join(dataDir, 'temporal');
  const root = resolve(opts.root);
  return {
    root,
    dataDir,
    ports,
    namespace: opts.namespace ?? 'default',
    retentionMs: opts.retentionMs ?? 7 * 24 * HOUR,
    withUi: opts.ui ?? true,
    pgDir: join(dataDir, 'postgres'),
    temporalDir,
    uiDir: join(dataDir, 'ui'),
    frontendAddress: `127.0.0.1:${ports.frontend.grpc}`,
    uiUrl: `http://127.0.0.1:${ports.ui}`,
    bins: temporalServerBinaries(root),
    pgOptions: { dataDir: join(dataDir, 'postgres'), port: ports.postgres },
    historyNames,
    uses: portUses(ports, { history: historyNames }),
    configInput: {
      ports,
      numHistoryShards: opts.numHistoryShards ?? DEFAULT_HISTORY_SHARDS,
      logLevel: opts.logLevel ?? 'warn',
      dynamicConfigFile: join(temporalDir, 'dynamicconfig.yaml'),
    },
  };
}

function postgresProcess(l: Layout): ClusterProcess {
  const pg = postgresCommand(l.pgOptions);
  return {
    name: 'postgres',
    role: 'postgres',
    file: pg.file,
    args: pg.args,
    env: {},
    cwd: l.pgDir,
    ...(pg.uid !== undefined ? { uid: pg.uid, gid: pg.gid } : {}),
    dataDir: l.pgDir,
    ports: l.uses.filter((u) => u.part === 'postgres'),
    after: [],
    ready: {
      description: `PostgreSQL to accept connections on 127.0.0.1:${l.ports.postgres}`,
      check: () => postgresAccepting(l.ports.postgres),
    },
    stopSignal: 'SIGINT',
    stopGraceMs: 30_000,
  };
}

function temporalProcess(
  l: Layout,
  name: string,
  role: TemporalRole,
  own: TemporalProcessPorts,
  after: string[],
): ClusterProcess {
  return {
    name,
    role,
    file: l.bins.server,
    args: ['--config-file', join(l.temporalDir, `${name}.yaml`), '--allow-no-auth', 'start', '--service', role],
    env: {},
    cwd: l.temporalDir,
    ports: l.uses.filter((u) => u.part === name),
    after,
    ready: {
      description: `${role} on 127.0.0.1:${own.grpc} to report SERVING`,
      check: () => grpcServing(`127.0.0.1:${own.grpc}`, HEALTH_SERVICE[role]),
    },
    stopSignal: 'SIGTERM',
    stopGraceMs: 30_000,
  };
}

/**
 * History and matching need only the database; the frontend routes to them; the worker
 * service runs its system workflows through the frontend. Matching starts first and alone:
 * the first process on an empty database writes the cluster's metadata record, and two
 * doing it at once race on its primary key (the loser exits). Matching is the quickest to be
 * ready (~2 s); the history processes then find the record and only read it.
 */
function temporalProcesses(l: Layout): ClusterProcess[] {
  const matching = temporalProcess(l, 'temporal-matching', 'matching', l.ports.matching, ['postgres']);
  const backends = [
    matching,
    ...l.ports.history.map((p, i) => temporalProcess(l, l.historyNames[i]!, 'history', p, ['postgres', matching.name])),
  ];
  const after = backends.map((b) => b.name);
  const frontend = temporalProcess(l, 'temporal-frontend', 'frontend', l.ports.frontend, after);
  const worker = temporalProcess(l, 'temporal-worker', 'worker', l.ports.worker, [frontend.name]);
  return [...backends, frontend, worker];
}

function uiProcess(l: Layout): ClusterProcess {
  return {
    name: 'temporal-ui',
    role: 'ui',
    file: uiServerBinary(l.root).uiServer,
    args: ['--root', l.uiDir, '--config', 'config', '--env', 'cluster', 'start'],
    env: {},
    cwd: l.uiDir,
    ports: l.uses.filter((u) => u.part === 'temporal-ui'),
    after: ['temporal-frontend'],
    ready: { description: `GET ${l.uiUrl}/ to answer 200`, check: () => httpOk(`${l.uiUrl}/`) },
    stopSignal: 'SIGTERM',
    stopGraceMs: 5_000,
  };
}

const built = (r: BuildResult & { version: string }) =>
  r.built ? `built v${r.version} in ${(r.ms / 1000).toFixed(0)} s` : `v${r.version} already built`;

/** Before anything starts: the binaries, the database's folder, every process's config file. */
function preparationSteps(l: Layout, processes: ClusterProcess[]): SetupStep[] {
  const step = (name: string, run: () => Promise<string>): SetupStep => ({ name, phase: 'before-start', run });
  return [
    step('build temporal-server', async () => built(await ensureTemporalServer(l.root))),
    ...(l.withUi ? [step('build temporal-ui-server', async () => built(await ensureUiServer(l.root)))] : []),
    step('initdb', () => {
      const existed = existsSync(join(l.pgDir, 'PG_VERSION'));
      initPostgres(l.pgOptions);
      return Promise.resolve(existed ? `${l.pgDir} exists` : `created ${l.pgDir}`);
    }),
    step('config', () => {
      for (const p of processes) {
        if (p.role === 'postgres' || p.role === 'ui') continue;
        const own = p.role === 'history' ? l.ports.history[l.historyNames.indexOf(p.name)]! : l.ports[p.role];
        writeJson(join(l.temporalDir, `${p.name}.yaml`), serverConfig(l.configInput, p.role, own));
      }
      writeJson(l.configInput.dynamicConfigFile, dynamicConfig());
      if (l.withUi) writeJson(join(l.uiDir, 'config', 'cluster.yaml'), uiConfig(l.ports, l.namespace));
      return Promise.resolve(`wrote ${l.temporalDir}`);
    }),
  ];
}

/** Once PostgreSQL is up: Temporal's schema and the API instances' database; once all is up: the namespace. */
function databaseSteps(l: Layout): SetupStep[] {
  return [
    {
      name: 'schema',
      phase: 'postgres-ready',
      async run() {
        const results = await ensureSchema(l.bins.sqlTool, l.ports.postgres);
        return results.map((r) => `${r.database} ${r.created ? 'created at' : 'at'} v${r.version}`).join(', ');
      },
    },
    {
      name: 'limits database',
      phase: 'postgres-ready',
      run() {
        ensureDatabase(l.ports.postgres, LIMITS_DATABASE);
        return Promise.resolve(`${LIMITS_DATABASE} for the API instances' rate windows`);
      },
    },
    {
      name: 'namespace',
      phase: 'cluster-ready',
      async run() {
        const r = await ensureNamespace(l.frontendAddress, l.namespace, l.retentionMs);
        const what = [
          r.registered ? 'registered' : 'exists',
          r.added.length ? `added ${r.added.join(', ')}` : 'search attributes present',
        ];
        return `${l.namespace}: ${what.join(', ')}, retention ${r.retentionSeconds} s`;
      },
    },
  ];
}

export function defineCluster(opts: ClusterOptions): ClusterDefinition {
  const l = layoutOf(opts);
  const processes = [postgresProcess(l), ...temporalProcesses(l), ...(l.withUi ? [uiProcess(l)] : [])];
  return {
    processes,
    setup: [...preparationSteps(l, processes), ...databaseSteps(l)],
    ports: l.ports,
    frontendAddress: l.frontendAddress,
    namespace: l.namespace,
    uiUrl: l.withUi ? l.uiUrl : undefined,
    dataDir: l.dataDir,
    limitsUrl: postgresUrl(l.ports.postgres, LIMITS_DATABASE),
    clientEnv: {
      TEMPORAL_ADDRESS: l.frontendAddress,
      TEMPORAL_NAMESPACE: l.namespace,
      ...(l.withUi ? { TEMPORAL_UI_URL: l.uiUrl } : {}),
    },
  };
}
