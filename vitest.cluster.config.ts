import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * The cluster suite, `npm run test:cluster`: the stack on the multi-process Temporal
 * cluster on PostgreSQL. Not part of `npm test`: the first run builds the Temporal server
 * from source (minutes), and the suite alone would push `npm test` past its time budget.
 */
export default defineConfig({
  // As vitest.config.ts: without the bundlers' `module` condition.
  ssr: { resolve: { conditions: ['retrysafe-source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    name: 'cluster',
    include: ['test/cluster/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 180_000,
    // A cold start builds the server and the SQL tool before anything runs.
    hookTimeout: 1_800_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
