// The peers the bench races retrysafe's checkout against: the same saga on Restate and on
// DBOS Transact, each described as data (the processes it needs, in start order, with
// their readiness probes and data directories) plus the steps around them, so the one
// process supervisor can run them like any other part. Nothing here imports a peer's
// packages: they are installed into tools/bench/peers/node_modules only when the bench asks
// for the peers (./install.ts), and this module must load without them.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDatabase, initPostgres, postgresBinDir, postgresCommand, postgresUrl, psql } from '../../postgres.js';

export const PEERS_DIR = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** How to tell that a process is ready: an HTTP GET answering 2xx, a TCP accept, or a command exiting 0. */
export type ReadyProbe =
  { http: string } | { tcp: { host: string; port: number } } | { command: { file: string; args: string[] } };

export interface ProcessSpec {
  name: string;
  file: string;
  args: string[];
  /** Variables set on top of the supervisor's own environment. */
  env: Record<string, string>;
  cwd: string;
  /** Set when the process must run as another user (PostgreSQL under root). */
  uid?: number;
  gid?: number;
  ready: ReadyProbe;
  /** The signal that stops it cleanly (PostgreSQL: SIGINT, its fast shutdown). */
  stopSignal: 'SIGTERM' | 'SIGINT';
  /** Where it keeps its state, if anywhere. */
  dataDir?: string;
  /** Runs once the process is ready, before the next one starts. */
  afterReady?: () => Promise<void>;
}

export interface PeerStack {
  peer: PeerName;
  /** Idempotent preparation before anything starts: data directories, initdb. */
  prepare(): void;
  /** Start in this order, each ready before the next; stop in reverse. */
  processes: ProcessSpec[];
  /** Once every process is ready: what the peer needs before the first checkout. */
  setup(): Promise<void>;
  /** Where the driver POSTs a checkout (Idempotency-Key header, retrysafe's JSON body). */
  checkoutUrl: string;
  /** The durability settings in force, for the report, as `setting = value` lines. */
  durability: string[];
}

export const PEER_NAMES = ['restate', 'dbos'] as const;
export type PeerName = (typeof PEER_NAMES)[number];

/** The ports each peer listens on (all on 127.0.0.1), for the caller to allocate. */
export const PEER_PORTS = {
  restate: ['ingress', 'admin', 'node', 'endpoint', 'service'],
  dbos: ['postgres', 'service'],
} as const satisfies Record<PeerName, readonly string[]>;

export interface PeerOptions<P extends PeerName> {
  /** This peer's own directory (created when missing); it survives a restart. */
  dataDir: string;
  ports: Record<(typeof PEER_PORTS)[P][number], number>;
  bankUrl: string;
  reservationsUrl: string;
  /** LOG_LEVEL of the peer's own processes (default warn, as the bench runs retrysafe's). */
  logLevel?: string;
  /** Extra node flags for the peer's Node process (e.g. --cpu-prof, as the bench profiles retrysafe's). */
  execArgv?: string[];
}

const LOOPBACK = '127.0.0.1';

/** `node --import tsx <entry>` from the repository root, like every other part. */
function nodeEntry(entry: string, execArgv: string[] = []): { file: string; args: string[]; cwd: string } {
  return { file: process.execPath, args: [...execArgv, '--import', 'tsx', join(PEERS_DIR, entry)], cwd: ROOT };
}

function sandboxEnv(opts: { bankUrl: string; reservationsUrl: string }): Record<string, string> {
  return { BANK_URL: opts.bankUrl, RESERVATIONS_URL: opts.reservationsUrl, DOWNSTREAM_TIMEOUT_MS: '5000' };
}

/**
 * A peer's Node process (`entry` under tools/bench/peers): its saga behind retrysafe's
 * checkout contract on the service port, ready once /healthz answers, with the sandboxes'
 * URLs and the peer's own settings in `env`.
 */
function peerService(
  name: string,
  entry: string,
  opts: Omit<PeerOptions<PeerName>, 'ports'> & { ports: { service: number } },
  env: Record<string, string>,
): ProcessSpec {
  const port = opts.ports.service;
  return {
    name,
    ...nodeEntry(entry, opts.execArgv),
    env: { ...sandboxEnv(opts), PEER_HOST: LOOPBACK, PEER_PORT: String(port), ...env },
    ready: { http: `http://${LOOPBACK}:${port}/healthz` },
    stopSignal: 'SIGTERM',
  };
}

/** The restate-server binary the npm package ships for this platform (its `bin` is a Node wrapper around it). */
function restateServerBinary(): string {
  const require = createRequire(join(PEERS_DIR, 'package.json'));
  return require.resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`);
}

/**
 * Restate: restate-server 1.7 (one node, every role) and one Node process holding the
 * workflow's service endpoint and the checkout contract in front of the ingress.
 * Its log is the durable record: with the default `replicated` provider, each append is
 * written by the node's log-server to RocksDB with the WAL fsynced before it is
 * acknowledged. Both knobs are set explicitly so a change of default cannot change them.
 */
const RESTATE_DURABILITY = [
  {
    setting: 'bifrost.default-provider',
    env: 'RESTATE_BIFROST__DEFAULT_PROVIDER',
    value: 'replicated',
    why: "the node's log-server stores the log",
  },
  {
    setting: 'log-server.rocksdb-disable-wal-fsync',
    env: 'RESTATE_LOG_SERVER__ROCKSDB_DISABLE_WAL_FSYNC',
    value: 'false',
    why: 'each log write batch is fsynced before it is acknowledged',
  },
];

export function restatePeer(opts: PeerOptions<'restate'>): PeerStack {
  const { ports } = opts;
  const ingress = `http://${LOOPBACK}:${ports.ingress}`;
  const admin = `http://${LOOPBACK}:${ports.admin}`;
  const endpointUri = `http://${LOOPBACK}:${ports.endpoint}`;
  const server: ProcessSpec = {
    name: 'restate-server',
    file: restateServerBinary(),
    args: ['--no-logo'],
    env: {
      ...Object.fromEntries(RESTATE_DURABILITY.map((k) => [k.env, k.value])),
      RESTATE_BASE_DIR: opts.dataDir,
      RESTATE_NODE_NAME: 'bench',
      RESTATE_CLUSTER_NAME: 'retrysafe-bench',
      RESTATE_LISTEN_MODE: 'tcp',
      RESTATE_BIND_ADDRESS: `${LOOPBACK}:${ports.node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://${LOOPBACK}:${ports.node}/`,
      RESTATE_ADMIN__BIND_ADDRESS: `${LOOPBACK}:${ports.admin}`,
      RESTATE_INGRESS__BIND_ADDRESS: `${LOOPBACK}:${ports.ingress}`,
      RESTATE_DISABLE_TELEMETRY: 'true',
      RESTATE_LOG_FILTER: `${opts.logLevel ?? 'warn'},restate=${opts.logLevel ?? 'warn'}`,
      RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
    },
    cwd: opts.dataDir,
    ready: { http: `${ingress}/restate/health` },
    stopSignal: 'SIGTERM',
    dataDir: opts.dataDir,
  };
  const service = peerService('restate-service', 'restate/server.ts', opts, {
    ENDPOINT_PORT: String(ports.endpoint),
    RESTATE_INGRESS_URL: ingress,
    RESTATE_LOGGING: (opts.logLevel ?? 'warn').toUpperCase(),
  });
  return {
    peer: 'restate',
    prepare: () => mkdirSync(opts.dataDir, { recursive: true }),
    processes: [server, service],
    setup: () => registerRestateDeployment(admin, endpointUri),
    checkoutUrl: `http://${LOOPBACK}:${ports.service}/v1/checkouts`,
    durability: RESTATE_DURABILITY.map((k) => `restate ${k.setting} = ${k.value} (${k.why})`),
  };
}

/**
 * Registers the service endpoint with restate-server (idempotent: `force` replaces a
 * registration left by an earlier run on the same data directory) and waits until the
 * admin API lists the service.
 */
async function registerRestateDeployment(admin: string, uri: string): Promise<void> {
  const res = await fetch(`${admin}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri, force: true }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`registering ${uri} with restate-server: ${res.status} ${await res.text()}`);
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${admin}/services/Checkout`, { signal: AbortSignal.timeout(5_000) })).status !== 200) {
    if (Date.now() > deadline) throw new Error('restate-server registered the deployment but does not list the Checkout service');
    await sleep(100);
  }
}

/**
 * DBOS Transact: a private PostgreSQL 15+ cluster (fsync, synchronous_commit and
 * full_page_writes on: every checkpoint is on disk before DBOS moves on) and the service
 * process that hosts the workflow and the HTTP endpoint.
 */
export function dbosPeer(opts: PeerOptions<'dbos'>): PeerStack {
  const { ports } = opts;
  const pg = { dataDir: join(opts.dataDir, 'postgres'), port: ports.postgres };
  const database = 'dbos_checkout';
  const postgres: ProcessSpec = {
    name: 'postgres',
    ...postgresCommand(pg),
    env: {},
    cwd: opts.dataDir,
    ready: {
      command: {
        file: join(postgresBinDir(), 'pg_isready'),
        args: ['-h', LOOPBACK, '-p', String(pg.port), '-U', 'postgres', '-q'],
      },
    },
    stopSignal: 'SIGINT',
    dataDir: pg.dataDir,
    afterReady: async () => ensureDatabase(pg.port, database),
  };
  const service = peerService('dbos-service', 'dbos/server.ts', opts, {
    DBOS_SYSTEM_DATABASE_URL: postgresUrl(pg.port, database),
    // One connection per concurrent client of the bench's widest batch.
    DBOS_POOL_SIZE: '32',
    LOG_LEVEL: opts.logLevel ?? 'warn',
  });
  return {
    peer: 'dbos',
    prepare: () => {
      mkdirSync(opts.dataDir, { recursive: true });
      initPostgres(pg);
    },
    processes: [postgres, service],
    setup: async () => verifyPostgresDurability(pg.port),
    checkoutUrl: `http://${LOOPBACK}:${ports.service}/v1/checkouts`,
    durability: POSTGRES_DURABILITY.map((name) => `postgresql ${name} = on`),
  };
}

const POSTGRES_DURABILITY = ['fsync', 'synchronous_commit', 'full_page_writes'];

/** Reads the settings back from the running server: a cluster configured elsewhere must not pass unnoticed. */
function verifyPostgresDurability(port: number): void {
  for (const name of POSTGRES_DURABILITY) {
    const value = psql(port, `SHOW ${name}`).trim();
    if (value !== 'on') throw new Error(`the DBOS peer's PostgreSQL runs with ${name} = ${value}; the race needs it on`);
  }
}

export function peerStack(peer: 'restate', opts: PeerOptions<'restate'>): PeerStack;
export function peerStack(peer: 'dbos', opts: PeerOptions<'dbos'>): PeerStack;
export function peerStack(peer: PeerName, opts: PeerOptions<'restate'> | PeerOptions<'dbos'>): PeerStack {
  return peer === 'restate' ? restatePeer(opts as PeerOptions<'restate'>) : dbosPeer(opts as PeerOptions<'dbos'>);
}
