// A private PostgreSQL cluster on loopback, for the parts of the project that need one
// (the multi-process Temporal cluster, the peer benchmarks): its own data directory and
// port, created with initdb on first use, durable as a production server is (fsync and
// synchronous_commit on). This module prepares the cluster and says how to run it; the
// process itself is started and supervised like every other part.
//
// PostgreSQL refuses to run as root. When this process is root (CI, containers), initdb
// and the server run as the `postgres` system user that Debian's package creates.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

export interface PostgresOptions {
  /** The cluster's data directory (created with initdb when empty). */
  dataDir: string;
  port: number;
  /** Connections the server accepts; Temporal's services and the peers each keep pools. */
  maxConnections?: number;
}

export interface PostgresCommand {
  file: string;
  args: string[];
  /** Set when the server must run as another user (this process is root). */
  uid?: number;
  gid?: number;
}

const SEARCH_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

/** The folder holding initdb, postgres and pg_isready: PG_BINDIR, pg_config, or Debian's layout. */
export function postgresBinDir(): string {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv) return fromEnv;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on PATH: try the usual places
  }
  const found = SEARCH_DIRS.find((dir) => existsSync(join(dir, 'initdb')));
  if (found) return found;
  throw new Error('PostgreSQL was not found: install it (Debian: apt-get install postgresql) or set PG_BINDIR');
}

/** uid/gid of the `postgres` user when this process is root, else undefined (run as ourselves). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error('running as root, but there is no postgres user to run PostgreSQL as');
  return { uid, gid };
}

/**
 * Creates the cluster when its data directory is empty (idempotent). Authentication is
 * `trust` on loopback only: the server listens on 127.0.0.1 and a socket in its own folder.
 */
export function initPostgres(opts: PostgresOptions): void {
  const user = serverUser();
  mkdirSync(opts.dataDir, { recursive: true });
  if (existsSync(join(opts.dataDir, 'PG_VERSION'))) return;
  if (readdirSync(opts.dataDir).length > 0) throw new Error(`${opts.dataDir} is not empty and holds no PostgreSQL cluster`);
  if (user) chownSync(opts.dataDir, user.uid, user.gid);
  execFileSync(
    join(postgresBinDir(), 'initdb'),
    ['-D', opts.dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8'],
    { stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}) },
  );
  // Durability as in production: every commit reaches the disk before it is acknowledged.
  const conf = [
    `listen_addresses = '127.0.0.1'`,
    `port = ${opts.port}`,
    `unix_socket_directories = '${opts.dataDir}'`,
    `max_connections = ${opts.maxConnections ?? 200}`,
    'fsync = on',
    'synchronous_commit = on',
    'full_page_writes = on',
    `shared_buffers = '256MB'`,
    `logging_collector = off`,
  ];
  writeFileSync(join(opts.dataDir, 'postgresql.auto.conf'), conf.join('\n') + '\n');
  if (user) chownSync(join(opts.dataDir, 'postgresql.auto.conf'), user.uid, user.gid);
}

/** How to run the server in the foreground (the supervisor owns the process). */
export function postgresCommand(opts: PostgresOptions): PostgresCommand {
  return {
    file: join(postgresBinDir(), 'postgres'),
    // The port is also in postgresql.auto.conf; passing it keeps a moved cluster honest.
    args: ['-D', opts.dataDir, '-p', String(opts.port)],
    ...(serverUser() ?? {}),
  };
}

/** True once the server accepts connections on 127.0.0.1:port. */
export function postgresReady(port: number): boolean {
  try {
    execFileSync(join(postgresBinDir(), 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q'], {
      stdio: 'ignore',
      timeout: 5_000,
    });
    return true;
  } catch {
    return false;
  }
}

/** Runs SQL as the superuser through psql (set-up only: create databases, users). */
export function psql(port: number, sql: string, database = 'postgres'): string {
  return execFileSync(
    join(postgresBinDir(), 'psql'),
    ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atqc', sql],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
  );
}

/** Creates `name` unless it exists (idempotent). */
export function ensureDatabase(port: number, name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  const exists = psql(port, `SELECT 1 FROM pg_database WHERE datname = '${name}'`).trim() === '1';
  if (!exists) psql(port, `CREATE DATABASE ${name}`);
}

/** `postgres://postgres@127.0.0.1:<port>/<database>` (trust auth on loopback). */
export function postgresUrl(port: number, database: string): string {
  return `postgres://postgres@127.0.0.1:${port}/${database}`;
}
