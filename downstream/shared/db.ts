// Opens a sandbox service's SQLite file. WAL lets auditors read while a charge commits;
// busy_timeout makes a second process wait for the write lock instead of failing at once.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type { Database };

export function openDatabase(path: string, opts: { busyTimeoutMs?: number } = {}): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`);
  db.pragma('foreign_keys = ON');
  return db;
}
