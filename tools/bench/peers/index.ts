// The peers the bench races retrysafe's checkout against: the same saga on Restate and on
// DBOS Transact, each a list of processes for the repository's one supervisor (started in
// order, each ready before the next, stopped in reverse) and the steps around them. Nothing
// here imports a peer's packages: they are installed into tools/bench/peers/node_modules only
// when the bench asks for the peers, and this module must load without them.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDatabase, initPostgres, postgresCommand, postgresReady, postgresUrl, psql } from '../../postgres.js';
import type { Part, PartSpec } from '../../supervisor/part.js';
import { freePort } from '../../supervisor/ports.js';
import type { Supervisor } from '../../supervisor/supervisor.js';

export const PEERS_DIR = fileURLToPath(new URL('.', import.meta.url));
export const PEER_NAMES = ['restate', 'dbos'] as const;
export type PeerName = (typeof PEER_NAMES)[number];

const LOOPBACK = '127.0.0.1';
const STAMP = join(PEERS_DIR, 'node_modules', '.retrysafe-peers-install-stamp');

/**
 * Installs the peers' own dependencies (Restate's server and SDK, DBOS Transact) into
 * tools/bench/peers/node_modules: users of retrysafe never download them. Idempotent: nothing
 * runs while package-lock.json is unchanged since the last install (a stamp holds its hash).
 */
export function ensurePeersInstalled(log: (line: string) => void): void {
  const lockHash = createHash('sha256')
    .update(readFileSync(join(PEERS_DIR, 'package-lock.json')))
    .digest('hex');
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === lockHash) return;
  // A first install takes the exact lock (npm ci); an existing tree is updated in place.
  const command = existsSync(join(PEERS_DIR, 'node_modules')) ? 'install' : 'ci';
  log(`peers: installing their npm dependencies into tools/bench/peers (npm ${command})…`);
  const res = spawnSync('npm', [command, '--no-audit', '--no-fund'], { cwd: PEERS_DIR, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`npm ${command} in ${PEERS_DIR} failed (${res.status ?? res.signal})`);
  writeFileSync(STAMP, lockHash + '\n');
}

export interface PeerOptions {
  /** This peer's own directory (created when missing). */
  dataDir: string;
  bankUrl: string;
  reservationsUrl: string;
  /** LOG_LEVEL of the peer's own processes (warn, as the bench runs retrysafe's). */
  logLevel: string;
}

export interface PeerStack {
  peer: PeerName;
  /** Start in this order, each ready before the next; stop in reverse. */
  parts: PartSpec[];
  /** Once every process is ready: what the peer needs before the first checkout. */
  setup(): Promise<void>;
  /** Where the driver POSTs a checkout (Idempotency-Key header, retrysafe's JSON body). */
  checkoutUrl: string;
  /** The durability settings in force, for the report, as `setting = value (why)` lines. */
  durability: string[];
}

/** A peer's process as a part: configured by its own settings alone, never by a retrysafe or Temporal one of ours. */
function peerPart(
  spec: Pick<PartSpec, 'name' | 'env' | 'cwd' | 'ready' | 'uid' | 'gid'> & { bin: string; args: string[]; stop?: NodeJS.Signals },
): PartSpec {
  const signal = spec.stop ?? 'SIGTERM';
  const { bin, args, stop: _, ...rest } = spec;
  return {
    ...rest,
    // The kernel stops it (its own clean stop) if the bench dies without stopping it.
    command: { bin, args, orphanSignal: signal },
    unsetEnv: [/^TEMPORAL_/, /^RETRYSAFE_/],
    stopSignal: signal,
    stopGraceMs: 15_000,
    // A first start on a busy machine: restate-server creates its stores, PostgreSQL recovers.
    readyTimeoutMs: 120_000,
    keepLines: 300,
  };
}

/** A peer's Node process: its saga (`entry` under tools/bench/peers) behind retrysafe's checkout contract on `port`. */
function peerService(name: string, entry: string, port: number, opts: PeerOptions, env: Record<string, string>): PartSpec {
  return peerPart({
    name,
    bin: process.execPath,
    args: ['--import', 'tsx', join(PEERS_DIR, entry)],
    cwd: join(PEERS_DIR, '..', '..', '..'),
    env: {
      ...{ BANK_URL: opts.bankUrl, RESERVATIONS_URL: opts.reservationsUrl, DOWNSTREAM_TIMEOUT_MS: '5000' },
      ...{ PEER_HOST: LOOPBACK, PEER_PORT: String(port), ...env },
    },
    ready: (ctx) => ctx.http(`http://${LOOPBACK}:${port}/healthz`),
  });
}

/**
 * Restate: restate-server 1.7 (one node, every role) and one Node process holding the
 * workflow's service endpoint and the checkout contract in front of the ingress. Its log is
 * the durable record: with the `replicated` provider, each append is written by the node's
 * log-server to RocksDB with the WAL fsynced before it is acknowledged. Both are set
 * explicitly so a change of default cannot change them.
 */
const RESTATE_DURABILITY = [
  ['bifrost.default-provider', 'RESTATE_BIFROST__DEFAULT_PROVIDER', 'replicated', "the node's log-server stores the log"],
  [
    'log-server.rocksdb-disable-wal-fsync',
    'RESTATE_LOG_SERVER__ROCKSDB_DISABLE_WAL_FSYNC',
    'false',
    'each log write batch is fsynced before it is acknowledged',
  ],
] as const;

async function restatePeer(opts: PeerOptions): Promise<PeerStack> {
  const [ingress, admin, node, endpoint, service] = await Promise.all(Array.from({ length: 5 }, () => freePort()));
  const url = (port: number) => `http://${LOOPBACK}:${port}`;
  mkdirSync(opts.dataDir, { recursive: true });
  // The restate-server binary the npm package ships for this platform (its `bin` is a Node wrapper around it).
  const bin = createRequire(join(PEERS_DIR, 'package.json')).resolve(
    `@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`,
  );
  const server = peerPart({
    name: 'restate-server',
    bin,
    args: ['--no-logo'],
    cwd: opts.dataDir,
    env: {
      ...Object.fromEntries(RESTATE_DURABILITY.map(([, env, value]) => [env, value])),
      ...{
        RESTATE_BASE_DIR: opts.dataDir,
        RESTATE_NODE_NAME: 'bench',
        RESTATE_CLUSTER_NAME: 'retrysafe-bench',
        RESTATE_LISTEN_MODE: 'tcp',
      },
      ...{ RESTATE_BIND_ADDRESS: `${LOOPBACK}:${node}`, RESTATE_ADVERTISED_ADDRESS: `${url(node!)}/` },
      ...{ RESTATE_ADMIN__BIND_ADDRESS: `${LOOPBACK}:${admin}`, RESTATE_INGRESS__BIND_ADDRESS: `${LOOPBACK}:${ingress}` },
      ...{
        RESTATE_DISABLE_TELEMETRY: 'true',
        RESTATE_LOG_FILTER: `${opts.logLevel},restate=${opts.logLevel}`,
        RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
      },
    },
    ready: (ctx) => ctx.http(`${url(ingress!)}/restate/health`),
  });
  const env = {
    ENDPOINT_PORT: String(endpoint),
    RESTATE_INGRESS_URL: url(ingress!),
    RESTATE_LOGGING: opts.logLevel.toUpperCase(),
  };
  return {
    peer: 'restate',
    parts: [server, peerService('restate-service', 'restate/server.ts', service!, opts, env)],
    // Registers the service endpoint (`force` replaces one an earlier run left), and waits until the admin API lists it.
    setup: async () => {
      const res = await fetch(`${url(admin!)}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri: url(endpoint!), force: true }),
        signal: AbortSignal.timeout(30_000),
      });
      if (!res.ok) throw new Error(`registering the endpoint with restate-server: ${res.status} ${await res.text()}`);
      const deadline = Date.now() + 30_000;
      while ((await fetch(`${url(admin!)}/services/Checkout`, { signal: AbortSignal.timeout(5_000) })).status !== 200) {
        if (Date.now() > deadline)
          throw new Error('restate-server registered the deployment but does not list the Checkout service');
        await sleep(100);
      }
    },
    checkoutUrl: `${url(service!)}/v1/checkouts`,
    durability: RESTATE_DURABILITY.map(([setting, , value, why]) => `restate ${setting} = ${value} (${why})`),
  };
}

const POSTGRES_DURABILITY = ['fsync', 'synchronous_commit', 'full_page_writes'];

/**
 * DBOS Transact: a private PostgreSQL 15+ cluster (fsync, synchronous_commit and
 * full_page_writes on, read back from the server: every checkpoint is on disk before DBOS
 * moves on) and the service process that hosts the workflow and the HTTP endpoint.
 */
async function dbosPeer(opts: PeerOptions): Promise<PeerStack> {
  const [port, service] = await Promise.all([freePort(), freePort()]);
  const pg = { dataDir: join(opts.dataDir, 'postgres'), port: port! };
  const database = 'dbos_checkout';
  mkdirSync(opts.dataDir, { recursive: true });
  initPostgres(pg);
  const { file, args, ...user } = postgresCommand(pg);
  const postgres = peerPart({
    name: 'postgres',
    ...{ bin: file, args, ...user, env: {}, cwd: opts.dataDir, stop: 'SIGINT' },
    ready: async (ctx) => {
      await ctx.poll('pg_isready to exit 0', async () => postgresReady(pg.port));
      ensureDatabase(pg.port, database);
    },
  });
  // One connection per concurrent client of the bench's widest batch.
  const env = { DBOS_SYSTEM_DATABASE_URL: postgresUrl(pg.port, database), DBOS_POOL_SIZE: '32', LOG_LEVEL: opts.logLevel };
  return {
    peer: 'dbos',
    parts: [postgres, peerService('dbos-service', 'dbos/server.ts', service!, opts, env)],
    // A cluster configured elsewhere must not pass unnoticed.
    setup: async () => {
      for (const name of POSTGRES_DURABILITY) {
        const value = psql(pg.port, `SHOW ${name}`).trim();
        if (value !== 'on') throw new Error(`the DBOS peer's PostgreSQL runs with ${name} = ${value}; the race needs it on`);
      }
    },
    checkoutUrl: `http://${LOOPBACK}:${service}/v1/checkouts`,
    durability: POSTGRES_DURABILITY.map((name) => `postgresql ${name} = on`),
  };
}

/** Prepares `peer`, starts its processes in order under `supervisor` on free loopback ports, and runs its setup. */
export async function startPeer(
  supervisor: Supervisor,
  peer: PeerName,
  opts: PeerOptions,
): Promise<{ stack: PeerStack; parts: Part[] }> {
  const stack = await (peer === 'restate' ? restatePeer : dbosPeer)(opts);
  const parts: Part[] = [];
  for (const spec of stack.parts) {
    parts.push(supervisor.add(spec));
    await parts.at(-1)!.start();
  }
  await stack.setup();
  return { stack, parts };
}
