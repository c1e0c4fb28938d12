import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One Temporal dev server per run: started here, shared by every file.
    globalSetup: ['test/support/global-setup.ts'],
    // Temporal's native worker and better-sqlite3 want real processes, not worker threads.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 90_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
