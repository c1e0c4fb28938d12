import { defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that need no Temporal server and start no stack: the fast tier,
 * `npm run test:unit`. Everything else runs in the `stack` project, against the one dev
 * server of the global setup; `npm test` runs both, each file once. A new file lands in
 * `stack` unless it is listed here (the slower tier is the safe default).
 */
const UNIT = [
  'test/api/admission.test.ts',
  'test/api/app.test.ts',
  'test/api/config.test.ts',
  // A scripted gRPC engine on loopback, no Temporal server.
  'test/api/engine-errors.test.ts',
  'test/api/fingerprint.test.ts',
  'test/api/idempotency-key.test.ts',
  'test/api/operation-resource.test.ts',
  'test/api/prefer.test.ts',
  'test/api/rate-windows.test.ts',
  'test/api/shutdown.test.ts',
  'test/api/slow-clients.test.ts',
  'test/api/tenant-limits.test.ts',
  'test/api/webhook-config.test.ts',
  // The sandboxes in this process, on their own SQLite files: nothing there speaks to
  // Temporal (their server tests spawn the process: stack tier).
  'test/bank/charges.test.ts',
  'test/bank/credit-reversal.test.ts',
  'test/bank/credits.test.ts',
  'test/bank/duplicates.test.ts',
  'test/bank/executor.test.ts',
  'test/bank/faults.test.ts',
  'test/bank/migrations.test.ts',
  'test/bank/reversal.test.ts',
  'test/bank/ttl.test.ts',
  'test/bank/validation.test.ts',
  'test/reservations/expiry.test.ts',
  'test/reservations/faults.test.ts',
  'test/reservations/holds.test.ts',
  'test/reservations/lifecycle.test.ts',
  'test/reservations/ttl.test.ts',
  'test/reservations/validation.test.ts',
  'test/sandboxes/config.test.ts',
  'test/sandboxes/edge.test.ts',
  // The bench's report rendered from stored results: no run, no stack.
  'test/bench/report/ablation.test.ts',
  'test/bench/report/contention.test.ts',
  'test/bench/report/full.test.ts',
  'test/bench/report/gap.test.ts',
  'test/bench/report/header.test.ts',
  'test/bench/report/history.test.ts',
  'test/bench/report/machine.test.ts',
  'test/bench/report/new-operations.test.ts',
  'test/bench/report/peers.test.ts',
  'test/bench/report/profiles.test.ts',
  'test/bench/report/ratios.test.ts',
  'test/bench/report/replays.test.ts',
  'test/bench/report/startup.test.ts',
  'test/bench/report/time.test.ts',
  'test/bench/report/usage.test.ts',
  'test/bench/report/verdicts.test.ts',
  'test/chaos/auditor.test.ts',
  // The example's own service in this process (the example end to end is stack tier).
  'test/examples/shipping-service.test.ts',
  'test/chaos/windows.test.ts',
  'test/cli/cancel.test.ts',
  'test/cli/overload.test.ts',
  'test/cli/request-checks.test.ts',
  'test/cli/usage.test.ts',
  'test/cli/webhooks.test.ts',
  'test/client/backoff.test.ts',
  'test/client/generated.test.ts',
  'test/client/cancel.test.ts',
  'test/client/keys.test.ts',
  'test/client/types.test.ts',
  'test/launcher/options.test.ts',
  'test/launcher/supervisor.test.ts',
  'test/security/key-comparison.test.ts',
];

export default defineConfig({
  // The client package (client/package.json, linked into node_modules as a workspace)
  // exports its compiled files; this condition points the repository's own tests at its
  // TypeScript source instead, so they need no build and never see a stale one.
  ssr: { resolve: { conditions: ['retrysafe-source', ...defaultServerConditions] } },
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
