import { fileURLToPath } from 'node:url';
import { defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The fast tier (`npm run test:unit`) is every file named `*.unit.test.ts`: it needs no
 * Temporal server and spawns no stack. Everything else runs in the `stack` project, against
 * the one dev server of the global setup; `npm test` runs both, each file once. A new file
 * lands in `stack` unless its name says otherwise (the slower tier is the safe default).
 */
const UNIT = ['test/**/*.unit.test.ts'];

export default defineConfig({
  // The client package (client/package.json, linked into node_modules as a workspace)
  // exports its compiled files; this condition points the repository's own tests at its
  // TypeScript source instead, so they need no build and never see a stale one.
  // Without the bundlers' `module` condition, which vitest also hands the test processes'
  // Node (--conditions): @opentelemetry/api names under it an ESM build Node cannot load
  // (its imports have no extension). Node itself never reads it: tests resolve as production.
  ssr: { resolve: { conditions: ['retrysafe-source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  // What an operations folder imports by package name, wherever the folder is (the API and
  // the worker map the same names at run time: common/code-path.ts PACKAGE_SUBPATHS).
  resolve: {
    alias: {
      'retrysafe-server/define': fileURLToPath(new URL('./workflows/define.ts', import.meta.url)),
      'retrysafe-server/keyed-service': fileURLToPath(new URL('./downstream/shared/keyed-service.ts', import.meta.url)),
    },
  },
  test: {
    // Temporal's native worker and better-sqlite3 want real processes, not worker threads.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 90_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'stack',
          include: ['test/**/*.test.ts'],
          // The cluster suite runs on its own (vitest.cluster.config.ts, `npm run test:cluster`).
          exclude: [...configDefaults.exclude, ...UNIT, 'test/cluster/**'],
          // One Temporal dev server per run: started here, shared by every file.
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
