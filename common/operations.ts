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
import { builtInRegistry, OperationRegistry } from '../workflows/registry.js';
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

export interface LoadedOperations {
  registry: OperationRegistry;
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
 * A resolve hook that points retrysafe's package names at this process's own modules, so
 * that an operations folder outside the checkout imports `retrysafe-server/define` with no
 * node_modules of its own (inside the checkout the package's `exports` would do as well).
 */
const MAP_PACKAGE_NAMES = `let targets = {};
export async function initialize(data) { targets = data; }
export async function resolve(specifier, context, next) {
  const target = targets[specifier];
  return target ? { url: target, shortCircuit: true } : next(specifier, context);
}`;
let namesMapped = false;

function mapPackageNames(): void {
  if (namesMapped) return;
  namesMapped = true;
  const data = Object.fromEntries(Object.entries(PACKAGE_SUBPATHS).map(([name, path]) => [name, pathToFileURL(path).href]));
  register(`data:text/javascript,${encodeURIComponent(MAP_PACKAGE_NAMES)}`, { data });
}

/** The built-in operations and those of RETRYSAFE_OPERATIONS, in one registry. */
export async function loadOperations(
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): Promise<LoadedOperations> {
  const modules = findOperationModules(env.RETRYSAFE_OPERATIONS, cwd);
  if (modules.length > 0) mapPackageNames();
  const definitions: OperationDefinition[] = [...builtInRegistry.all];
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
    return { registry: new OperationRegistry(definitions), modules };
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
  if (modules.some((m) => m.activitiesFile)) mapPackageNames();
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
