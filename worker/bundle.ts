// The workflow bundle the worker runs: the repository's workflows and, when
// RETRYSAFE_OPERATIONS names folders of operations from outside, their definitions too.
// Those come in through a small generated entry module that re-exports workflows/ and a
// generated registration module that adds the outside definitions to the bundle's
// catalog, so the one generic workflow runs them.
//
// The catalog (the definitions, their request schemas, typebox) is PRELOADED: the worker
// runs every workflow in one reused V8 context and gives each execution a fresh copy of
// every module it imports, so without this each operation would evaluate typebox and the
// definitions anew, the largest share of the worker's CPU per operation. Preloaded modules
// are evaluated once per context, before any workflow runs, then frozen and shared by all
// executions: right for definitions, which are plain data, the same for every execution.
// Modules with state of their own per execution (the saga, cancellation.ts) stay per
// execution. Frozen typebox builds no schema afterwards, so every module that builds one at
// its top level must be reached from a preloaded one (definitions are, through the catalog
// or the registration module); one evaluated per execution fails every execution.
//
// Bundles are cached by a hash of everything they are made of, so a restart skips webpack.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { bundleWorkflowCode, type BundleOptions, type WorkerOptions } from '@temporalio/worker';
import { codePath, PACKAGE_ROOT, PACKAGE_SUBPATHS } from '../common/code-path.js';
import type { OperationModule } from '../common/definition-folders.js';

// Files reached by their path, in the layout that runs (source, or compiled under dist/).
export const WORKFLOWS_PATH = codePath('workflows/index.ts');
const CATALOG_PATH = codePath('workflows/catalog.ts');
/** Bundled with the workflows as interceptor modules: the saga reads a cancel request's reason there. */
export const WORKFLOW_INTERCEPTOR_MODULES = [codePath('workflows/cancellation.ts')];
/** Evaluated once per V8 context and shared by every execution (see above). */
const PRELOADED_MODULES = [CATALOG_PATH];
/** How every bundle of the built-in workflows is made (worker, tests, bench): the same code everywhere. */
export const WORKFLOW_BUNDLE_OPTIONS = {
  workflowsPath: WORKFLOWS_PATH,
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
  preloadModules: PRELOADED_MODULES,
};
const WORKFLOWS_DIR = codePath('workflows/');
/** The repository's dependencies, for operations from outside that import typebox or the SDK. */
const NODE_MODULES = join(PACKAGE_ROOT, 'node_modules');
/** Where prebuilt workflow bundles are kept, by content hash (the usual home of tool caches). */
export const BUNDLE_CACHE_DIR = join(PACKAGE_ROOT, 'node_modules', '.cache', 'retrysafe');

function sdkVersion(pkg: string): string {
  const require = createRequire(import.meta.url);
  try {
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function hashFolder(hash: ReturnType<typeof createHash>, dir: string): void {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes(`${'node_modules'}`))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of files)
    hash
      .update(`${relative(dir, file)}\n`)
      .update(readFileSync(file))
      .update('\n');
}

/**
 * What the bundle is made of: workflows/, the folders of outside operations, the SDK that
 * bundles and runs it, and how it is assembled (which modules are interceptors or preloaded).
 * It names the bundle's cache file and, by default, a versioned worker's build ID.
 */
export function workflowSourceHash(modules: readonly OperationModule[]): string {
  const hash = createHash('sha256');
  for (const pkg of ['@temporalio/worker', '@temporalio/workflow', '@temporalio/common'])
    hash.update(`${pkg}@${sdkVersion(pkg)}\n`);
  const assembly = { interceptors: WORKFLOW_INTERCEPTOR_MODULES, preloaded: PRELOADED_MODULES };
  hash.update(`${JSON.stringify(assembly, (_, v: unknown) => (typeof v === 'string' ? relative(WORKFLOWS_DIR, v) : v))}\n`);
  hashFolder(hash, WORKFLOWS_DIR);
  for (const module of modules) {
    hash.update(`module ${module.operationsFile}\n`);
    hashFolder(hash, module.dir);
  }
  return hash.digest('hex').slice(0, 20);
}

/**
 * The module that adds the outside definitions to the bundle's catalog. Preloaded, so it
 * runs once per V8 context, like the catalog it adds to (run per execution, it would add
 * them again to the shared catalog, which refuses a type defined twice).
 */
function registrationSource(modules: readonly OperationModule[]): string {
  const lines = [
    "// Generated by worker/bundle.ts: the operations of RETRYSAFE_OPERATIONS, added to the bundle's catalog.",
    `import { registerDefinitions } from ${JSON.stringify(CATALOG_PATH)};`,
    ...modules.map((m, i) => `import { operations as outside${i} } from ${JSON.stringify(m.operationsFile)};`),
    `registerDefinitions([${modules.map((_, i) => `...outside${i}`).join(', ')}]);`,
  ];
  return lines.join('\n') + '\n';
}

/** The entry module of a bundle with outside operations: workflows/, and the registration of their definitions. */
function entrySource(registration: string): string {
  const lines = [
    '// Generated by worker/bundle.ts: the workflows of retrysafe and the operations of RETRYSAFE_OPERATIONS.',
    `export * from ${JSON.stringify(WORKFLOWS_PATH)};`,
    `export { default } from ${JSON.stringify(WORKFLOWS_PATH)};`,
    // Already run by the preload in a reused context; run here by a context of its own.
    `import ${JSON.stringify(registration)};`,
  ];
  return lines.join('\n') + '\n';
}

/** Bundle options for the built-in workflows and `modules`; writes the entry modules when there are outside operations. */
export function workflowBundleOptions(modules: readonly OperationModule[], cacheDir: string = BUNDLE_CACHE_DIR): BundleOptions {
  if (modules.length === 0) return { ...WORKFLOW_BUNDLE_OPTIONS };
  mkdirSync(cacheDir, { recursive: true });
  const hash = workflowSourceHash(modules);
  const registration = join(cacheDir, `workflow-registration-${hash}.ts`);
  const entry = join(cacheDir, `workflow-entry-${hash}.ts`);
  if (!existsSync(registration)) writeAtomically(registration, registrationSource(modules));
  if (!existsSync(entry)) writeAtomically(entry, entrySource(registration));
  return {
    workflowsPath: entry,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    preloadModules: [...PRELOADED_MODULES, registration],
    // An outside folder imports retrysafe by its package names, and resolves anything else it
    // imports (typebox, the SDK) from the repository's dependencies too.
    webpackConfigHook: (config) => ({
      ...config,
      resolve: {
        ...config.resolve,
        alias: { ...(config.resolve?.alias as Record<string, string> | undefined), ...PACKAGE_SUBPATHS },
        modules: [...(config.resolve?.modules ?? ['node_modules']), NODE_MODULES],
      },
    }),
  };
}

/** The cache file of the bundle of the current workflow sources (and outside operations). */
export function workflowBundleCachePath(cacheDir: string = BUNDLE_CACHE_DIR, modules: readonly OperationModule[] = []): string {
  return join(cacheDir, `workflow-bundle-${workflowSourceHash(modules)}.js`);
}

/**
 * The workflow bundle, built once per version of its sources: webpack takes seconds (much
 * more on a busy machine), and a worker restart should not wait for it. An unwritable cache
 * only costs the build.
 */
export async function cachedWorkflowBundle(
  cacheDir: string,
  modules: readonly OperationModule[] = [],
): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  const codePath = workflowBundleCachePath(cacheDir, modules);
  if (existsSync(codePath)) return { codePath };
  const { code } = await bundleWorkflowCode(workflowBundleOptions(modules, cacheDir));
  try {
    writeAtomically(codePath, code);
    return { codePath };
  } catch {
    return { code };
  }
}

/** Written aside and renamed, so a worker starting at the same time never reads half a file. */
function writeAtomically(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, content);
  renameSync(partial, path);
}
