// The chaos run (tools/chaos/) as part of the suite: a one-minute seeded run of the whole stack
// as real processes (two APIs, two workers, Temporal restarted and killed outright on its
// own database file, the sandboxes and an API killed mid-request, sandboxes dropping
// answers and going down, one tenant flooding the APIs), every operation type of the
// catalog in the mix, audited against the invariants. Here we check that it ran what it
// promised (every fault kind, 503 while Temporal was down, 429 and 503 engine_busy under
// the flood) and that its report adds up against the ledgers; the auditor itself checks
// each operation. The same run on the cluster is `npm run chaos -- --cluster`
// (test/cluster covers the cluster's crashes).
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, inject, it } from 'vitest';
import { PROCESS_FAULT_RATES } from '../../tools/chaos/fault-schedule.js';
import { buildPlan } from '../../tools/chaos/plan.js';
import { TENANTS } from '../../tools/chaos/settings.js';
import type { ChaosReport } from '../../tools/chaos/report.js';
import { builtInCatalog } from '../../workflows/catalog.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runChaos(args: string[], timeoutMs: number) {
  return execa(process.execPath, ['--import', 'tsx', 'tools/chaos/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_PRETTY: '0', NO_COLOR: '1' },
    reject: false,
    all: true,
    timeout: timeoutMs,
    // SIGTERM lets the runner stop its stack before it goes.
    killSignal: 'SIGTERM',
    forceKillAfterDelay: 20_000,
    cleanup: true,
  });
}

describe('the chaos runner command line', () => {
  it.each([
    [['--duration', '5q'], '--duration "5q" is not a duration'],
    [['--duration', '2s'], '--duration 2s is out of range'],
    [['--seed=-3'], '--seed "-3" is not a whole number'],
    [['--seed', '1.5'], '--seed "1.5" is not a whole number'],
    [['--ops', '0'], '--ops 0 is out of range'],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j with one line naming it, then the usage, and exit code 2', async (args, message) => {
    const result = await runChaos(args, 30_000);
    expect(result.exitCode).toBe(2);
    const lines = String(result.stderr).split('\n');
    expect(lines[0]).toMatch(/^chaos: /);
    expect(lines[0]).toContain(message);
    expect(lines[1]).toMatch(/^usage: npm run chaos -- /);
    expect(String(result.stdout)).toBe('');
  });

  it('plans the same schedule for the same seed, and prints its hash', async () => {
    const a = buildPlan({ seed: 7, durationMs: 60_000, ops: 100, topology: 'embedded' });
    const b = buildPlan({ seed: 7, durationMs: 60_000, ops: 100, topology: 'embedded' });
    const c = buildPlan({ seed: 8, durationMs: 60_000, ops: 100, topology: 'embedded' });
    expect(b).toEqual(a);
    expect(c.hash).not.toBe(a.hash);
    expect(c.processFaults).not.toEqual(a.processFaults);
    const printed = await runChaos(['--seed', '7', '--duration', '60s', '--ops', '100', '--plan'], 30_000);
    expect(printed.exitCode).toBe(0);
    expect(String(printed.stdout)).toContain(`schedule hash: ${a.hash}`);
  });

  it("plans every crash of its topology at least once, the cluster's on the cluster, deterministically", async () => {
    for (const topology of ['embedded', 'cluster'] as const) {
      for (const durationMs of [60_000, 300_000]) {
        const plan = buildPlan({ seed: 7, durationMs, ops: 100, topology });
        expect(buildPlan({ seed: 7, durationMs, ops: 100, topology })).toEqual(plan);
        const kinds = new Set(plan.processFaults.map((f) => f.kind));
        expect([...kinds].sort()).toEqual(PROCESS_FAULT_RATES[topology].map(([kind]) => kind).sort());
      }
    }
    const embedded = buildPlan({ seed: 7, durationMs: 300_000, ops: 100, topology: 'embedded' });
    const cluster = buildPlan({ seed: 7, durationMs: 300_000, ops: 100, topology: 'cluster' });
    // The same load and sandbox faults on both; only the process faults differ.
    expect(cluster.ops).toEqual(embedded.ops);
    expect(cluster.sandboxFaults).toEqual(embedded.sandboxFaults);
    expect(cluster.hash).not.toBe(embedded.hash);
    expect(cluster.processFaults.map((f) => f.kind)).toContain('history_kill');
    expect(embedded.processFaults.map((f) => f.kind)).not.toContain('history_kill');
    const printed = await runChaos(['--cluster', '--seed', '7', '--duration', '5m', '--ops', '100', '--plan'], 30_000);
    expect(printed.exitCode).toBe(0);
    expect(String(printed.stdout)).toContain(`schedule hash: ${cluster.hash}`);
    expect(String(printed.stdout)).toContain('Temporal cluster on PostgreSQL');
  });
});

describe('a one-minute chaos run', () => {
  it(
    'injects every fault kind, runs every operation type, sheds a flood, and the audit finds no violation',
    { timeout: 360_000 },
    async () => {
      const reportFile = join(mkdtempSync(join(inject('tmpRoot'), 'chaos-')), 'report.json');
      const started = Date.now();
      // The suite runs this beside its other stack tests on a small machine, where the engine
      // can fall minutes behind: the bound on settling is for correctness, not speed.
      const result = await runChaos(['--seed', '1', '--duration', '60s', '--settle', '180s', '--report', reportFile], 340_000);
      const output = String(result.all).split('\n').slice(-60).join('\n');
      expect(result.exitCode, output).toBe(0);
      const report = JSON.parse(readFileSync(reportFile, 'utf8')) as ChaosReport;
      console.log(
        `chaos run: ${((Date.now() - started) / 1000).toFixed(0)} s, ${report.operations.total} operations, ${report.http.requests} requests`,
      );

      expect(report.passed).toBe(true);
      expect(report.violations).toEqual([]);
      const plan = buildPlan({
        seed: 1,
        durationMs: 60_000,
        ops: report.operations.total - report.operations.flood,
        topology: 'embedded',
      });
      expect(report.scheduleHash).toBe(plan.hash);

      // Every kind of fault was really injected (counted where it fired, not where it was planned).
      expect(report.faults.droppedResponses).toBeGreaterThanOrEqual(1);
      expect(report.faults.failedBeforeCommit).toBeGreaterThanOrEqual(1);
      expect(report.faults.crashedAfterCommit).toBeGreaterThanOrEqual(1);
      expect(report.faults.delayWindows).toBeGreaterThanOrEqual(1);
      expect(report.faults.downWindows).toBeGreaterThanOrEqual(1);
      expect(report.faults.refusedWhileDown).toBeGreaterThanOrEqual(1);
      expect(report.faults.delayed).toBeGreaterThanOrEqual(1);
      expect(report.faults.downstreamCallsFailed.unavailable).toBeGreaterThanOrEqual(1);
      // Every crash and restart of the embedded topology, each part back afterwards.
      for (const [kind] of PROCESS_FAULT_RATES.embedded)
        expect(report.faults.processes[kind] ?? 0, `${kind} never fired:\n${output}`).toBeGreaterThanOrEqual(1);
      for (const kind of ['bank_kill', 'reservations_kill', 'api_kill'] as const)
        expect(report.faults.inFlightAtKill[kind], kind).toHaveLength(report.faults.processes[kind]!);
      // The run's own kills are not news; nothing died on its own.
      expect(report.faults.unexpectedExits).toEqual({});

      // While Temporal was down: 503 engine_unavailable with Retry-After, readiness 503, never a 500.
      expect(report.http.unavailableByCode.engine_unavailable).toBeGreaterThanOrEqual(1);
      expect(report.http.unavailableSamples.engine_unavailable?.retryAfter).toMatch(/^\d+$/);
      expect(report.faults.readyzWhileTemporalDown['503']).toBeGreaterThanOrEqual(1);
      expect(report.faults.readyzWhileTemporalDown['200']).toBeUndefined();
      expect(Object.keys(report.http.byStatus).filter((s) => s.startsWith('5') && s !== '503')).toEqual([]);

      // The flood was shed past its rate (a burst of 60 against 5/s), and every one of its
      // operations was accepted in the end; the other tenant was never limited. Whether the
      // burst also met 503 engine_busy depends on how fast the instance drains it, so the
      // report counts it and the test does not require it.
      expect(report.flood.tenant).toBe(TENANTS.flood);
      expect(report.flood.byStatus['429'], output).toBeGreaterThanOrEqual(1);
      expect(report.flood.accepted).toBe(report.flood.ops);
      expect(report.http.byTenant[TENANTS.main]?.byStatus['429']).toBeUndefined();

      // Retries really happened, through both instances, and every changed amount was refused.
      expect(report.http.requests).toBeGreaterThan(2 * report.operations.total);
      expect(report.http.byApi[0]).toBeGreaterThan(0);
      expect(report.http.byApi[1]).toBeGreaterThan(0);
      expect(report.http.concurrentClients).toBeGreaterThan(0);
      expect(report.http.changedAmountSent).toBeGreaterThan(0);
      expect(report.http.got422).toBe(report.http.changedAmountSent);
      expect(report.http.replayHeader.missing).toBe(0);

      // Every operation accounted for; fences and NeedsAttention happened within the run.
      const { outcomes } = report;
      expect(outcomes.open).toBe(0);
      expect(outcomes.succeeded + outcomes.failed + outcomes.openNeedsAttention + outcomes.neverStarted).toBe(
        report.operations.total,
      );
      expect(outcomes.succeeded).toBeGreaterThan(0);
      // Every type of the catalog ran, and each succeeded at least once.
      expect(Object.keys(report.operations.byType)).toEqual(builtInCatalog.types);
      for (const type of builtInCatalog.types) expect(outcomes.byType[type]?.succeeded, type).toBeGreaterThan(0);
      expect(report.conservation.money.movedBetweenAccounts).toBeGreaterThan(0);
      expect(report.conservation.money.fell).toBe(report.conservation.money.chargedOut);
      const unavailable = new Set(
        builtInCatalog.all.flatMap((d) => [d.unavailableCode, ...d.steps.flatMap((s) => s.unavailableCode ?? [])]),
      );
      expect([...unavailable].reduce((n, code) => n + (outcomes.byCode[code] ?? 0), 0)).toBeGreaterThan(0);
      expect(outcomes.byCode.insufficient_funds ?? 0).toBeGreaterThan(0);
      expect(outcomes.needsAttention).toBeGreaterThan(0);

      // The ledgers add up: money moved only under the operations' keys, stock likewise.
      for (const a of report.conservation.accounts) {
        expect(a.initial - a.final, a.id).toBe(a.netCharged);
        expect(a.netCharged, a.id).toBe(a.succeeded);
        expect(a.netCharged, a.id).toBe(a.charged - a.credited);
      }
      expect(report.conservation.accounts.find((a) => a.id === 'acc_chaos_poor')?.final).toBe(50);
      expect(report.conservation.accounts.reduce((sum, a) => sum + a.netCharged, 0)).toBeGreaterThan(0);
      for (const s of report.conservation.skus) {
        expect(s.initial - s.available, s.sku).toBe(s.confirmedByOps + s.heldByOps);
        expect(s.confirmedByOps, s.sku).toBe(s.succeeded);
        expect(s.held, s.sku).toBe(0);
      }
      expect(report.conservation.skus.find((s) => s.sku === 'sku_chaos_soldout')?.confirmedByOps).toBe(0);
    },
  );
});
