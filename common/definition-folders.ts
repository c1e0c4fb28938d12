// Operations from outside the repository's source folders, loaded by configuration:
// RETRYSAFE_OPERATIONS names one or more folders (comma-separated), each holding
//
//   operations.ts   export const operations: OperationDefinition[]   (required; pure: it is
//                   bundled into the workflow code, so no I/O, no Node built-ins)
//   activities.ts   export function createActivities(env): Record<string, Function>
//                   (optional: hand-written activities its steps name; worker only)
//
// The API and the worker load the same folders, so both know the same operations: the API
// routes and validates them, the worker runs them (worker/bundle.ts adds them to the
// workflow bundle). A declared HTTP step needs no activities.ts: its service's base URL
// comes from RETRYSAFE_SERVICES.
import { existsSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { OperationDefinition } from '../workflows/definition.js';
import { COMPILED, PACKAGE_SUBPATHS } from './code-path.js';
import { ConfigError } from './env.js';

/** One folder of operations from outside. */
export interface OperationModule {
  dir: string;
  /** The module the workflow bundle imports (its definitions). */
  operationsFile: string;
  /** The worker's hand-written activities for these operations, when the folder has any. */
  activitiesFile?: string;
}

/**
 * What the folders' definitions join: the built-ins' catalog, passed in by the worker and
 * the API (common/ is the ground floor: it does not import the catalog itself).
 */
export interface Catalog<C> {
  with(more: readonly OperationDefinition[]): C;
}

export interface LoadedOperations<C> {
  catalog: C;
  modules: OperationModule[];
}

/** The layout that runs first: source (tsx, tests) or compiled (`npm run build`, plain node, which cannot load .ts). */
const CANDIDATES = COMPILED
  ? { operations: ['operations.js', 'operations.ts'], activities: ['activities.js', 'activities.ts'] }
  : { operations: ['operations.ts', 'operations.js'], activities: ['activities.ts', 'activities.js'] };

function firstFile(dir: string, names: readonly string[]): string | undefined {
  return names.map((n) => join(dir, n)).find((f) => existsSync(f) && statSync(f).isFile());
}

/** Where RETRYSAFE_OPERATIONS points, checked; relative folders are taken from `cwd`. */
export function findOperationModules(raw: string | undefined, cwd = process.cwd()): OperationModule[] {
  if (raw === undefined || raw.trim() === '') return [];
  const problems: string[] = [];
  const modules: OperationModule[] = [];
  for (const [i, entry] of raw.split(',').entries()) {
    const path = entry.trim();
    if (path === '') {
      problems.push(`RETRYSAFE_OPERATIONS entry ${i + 1} is empty`);
      continue;
    }
    const dir = isAbsolute(path) ? path : resolve(cwd, path);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      problems.push(`RETRYSAFE_OPERATIONS entry ${i + 1} (${path}) is not a folder`);
      continue;
    }
    const operationsFile = firstFile(dir, CANDIDATES.operations);
    if (!operationsFile) {
      problems.push(`RETRYSAFE_OPERATIONS entry ${i + 1} (${path}) has no operations.ts (or operations.js)`);
      continue;
    }
    const activitiesFile = firstFile(dir, CANDIDATES.activities);
    modules.push({ dir, operationsFile, ...(activitiesFile ? { activitiesFile } : {}) });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return modules;
}

/**
 * A resolve hook for the folders of operations from outside: retrysafe's package names
 * point at this process's own modules (the next hooks resolve that file as any other:
 * tsx's, for TypeScript), so a folder anywhere on disk imports `retrysafe-server/define`
 * with no node_modules of its own; and the folder's files are ES modules whatever package
 * a folder may sit in (one with no package.json would otherwise load as CommonJS, which
 * this hook does not reach).
 */
const OUTSIDE_FOLDERS_HOOK = `let targets = {};
let folders = [];
export async function initialize(data) { targets = data.targets; folders = data.folders; }
export async function resolve(specifier, context, next) {
  const resolved = await next(targets[specifier] ?? specifier, context);
  const outside = folders.some((folder) => resolved.url.startsWith(folder)) && /\\.[cm]?ts$/.test(resolved.url);
  return outside ? { ...resolved, format: 'module' } : resolved;
}`;
const hookedFolders = new Set<string>();

function hookOutsideFolders(modules: readonly OperationModule[]): void {
  const folders = modules.map((m) => pathToFileURL(m.dir).href.replace(/\/?$/, '/')).filter((f) => !hookedFolders.has(f));
  if (folders.length === 0) return;
  for (const f of folders) hookedFolders.add(f);
  const targets = Object.fromEntries(Object.entries(PACKAGE_SUBPATHS).map(([name, path]) => [name, pathToFileURL(path).href]));
  register(`data:text/javascript,${encodeURIComponent(OUTSIDE_FOLDERS_HOOK)}`, { data: { targets, folders } });
}

/** The built-in operations and those of RETRYSAFE_OPERATIONS, in one catalog. */
export async function loadOperations<C>(
  builtIns: Catalog<C>,
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): Promise<LoadedOperations<C>> {
  const modules = findOperationModules(env.RETRYSAFE_OPERATIONS, cwd);
  hookOutsideFolders(modules);
  const definitions: OperationDefinition[] = [];
  const problems: string[] = [];
  for (const module of modules) {
    const loaded = (await import(pathToFileURL(module.operationsFile).href)) as { operations?: unknown };
    if (!Array.isArray(loaded.operations) || loaded.operations.length === 0) {
      problems.push(`${module.operationsFile} must export a non-empty array \`operations\` (see examples/)`);
      continue;
    }
    definitions.push(...(loaded.operations as OperationDefinition[]));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  try {
    return { catalog: builtIns.with(definitions), modules };
  } catch (err) {
    throw new ConfigError([`RETRYSAFE_OPERATIONS: ${(err as Error).message}`]);
  }
}

/** A hand-written activity of an outside folder: its target (a DownstreamTarget), and the input its step's field map builds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each folder types its own activities
type OutsideActivity = (...args: any[]) => Promise<unknown>;

/** The hand-written activities of the folders that have an activities module, merged. */
export async function loadOperationActivities(
  modules: readonly OperationModule[],
  env: Record<string, string | undefined> = process.env,
): Promise<Record<string, OutsideActivity>> {
  const activities: Record<string, OutsideActivity> = {};
  hookOutsideFolders(modules);
  for (const module of modules) {
    if (!module.activitiesFile) continue;
    const loaded = (await import(pathToFileURL(module.activitiesFile).href)) as { createActivities?: unknown };
    if (typeof loaded.createActivities !== 'function') {
      throw new ConfigError([`${module.activitiesFile} must export a function createActivities(env)`]);
    }
    Object.assign(activities, (loaded.createActivities as (e: typeof env) => object)(env));
  }
  return activities;
}
