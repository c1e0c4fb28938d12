// The cluster's databases and their schema, set up and upgraded with the server's own SQL
// tool: `setup-schema -v 0.0` creates the version bookkeeping once, then `update-schema`
// applies every versioned step the database lacks. The schema is the one embedded in the
// tool (`--schema-name`), so it always matches the server built with it. Re-running on an
// existing database applies nothing, or only a newer release's upgrade steps.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureDatabase, psql } from '../postgres.js';
import { STORES, TEMPORAL_DB_USER } from './config.js';

const run = promisify(execFile);

export interface SchemaResult {
  database: string;
  /** The schema version recorded after the update. */
  version: string;
  created: boolean;
}

export async function ensureSchema(sqlTool: string, port: number): Promise<SchemaResult[]> {
  // A role of its own, as in production: the services never log in as the superuser.
  psql(
    port,
    `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${TEMPORAL_DB_USER}') THEN CREATE ROLE ${TEMPORAL_DB_USER} LOGIN; END IF; END $$`,
  );
  const results: SchemaResult[] = [];
  for (const { database, schema } of Object.values(STORES)) {
    ensureDatabase(port, database);
    psql(port, `ALTER DATABASE ${database} OWNER TO ${TEMPORAL_DB_USER}`);
    psql(port, `ALTER SCHEMA public OWNER TO ${TEMPORAL_DB_USER}`, database);
    const tool = (...args: string[]) =>
      run(
        sqlTool,
        [
          '--plugin',
          'postgres12',
          '--ep',
          '127.0.0.1',
          '--port',
          String(port),
          '--user',
          TEMPORAL_DB_USER,
          '--db',
          database,
          ...args,
        ],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((err: Error & { stderr?: string; stdout?: string }) => {
        throw new Error(
          `temporal-sql-tool ${args[0]} on ${database} failed: ${(err.stderr || err.stdout || err.message).trim()}`,
        );
      });
    const created = psql(port, `SELECT to_regclass('public.schema_version') IS NULL`, database).trim() === 't';
    if (created) await tool('setup-schema', '-v', '0.0');
    await tool('update-schema', '--schema-name', schema);
    const version = psql(port, `SELECT curr_version FROM schema_version`, database).trim();
    results.push({ database, version, created });
  }
  return results;
}
