// CI smoke of `npm run bench`: the bench runs as a process in its smallest mode, into a
// temporary results dir, and must write a report that parses and shows, under 100
// identical concurrent requests for one key, one execution and one downstream effect;
// its verdicts, judged from the run, and where the time of a checkout went. It runs
// without --peers, so nothing is installed and no peer runs (their figures read "not
// measured"). No timing is asserted: performance numbers belong to the bench's own report.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BenchResults } from '../../bench/results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run bench -- --smoke', () => {
  let outDir: string;
  let results: BenchResults;
  let run: { exitCode?: number; stdout: string; stderr: string };

  beforeAll(async () => {
    outDir = mkdtempSync(join(inject('tmpRoot'), 'bench-smoke-'));
    run = await execa(process.execPath, ['--import', 'tsx', 'bench/main.ts', '--smoke', '--out', outDir, '--name', 'smoke'], {
      cwd: ROOT,
      reject: false,
      timeout: 240_000,
      env: { LOG_PRETTY: '0' },
      stdin: 'ignore',
    });
    if (run.exitCode === 0) results = JSON.parse(readFileSync(join(outDir, 'smoke.json'), 'utf8')) as BenchResults;
  }, 250_000);

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('exits 0 and writes the JSON results, the Markdown report and the chart', () => {
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const report = readFileSync(join(outDir, 'smoke.md'), 'utf8');
    expect(report).toMatch(/^# retrysafe benchmark/);
    expect(report).toContain('## Verdicts');
    expect(report).toContain('## Ratios');
    expect(report).toContain('## 4. Contention');
    expect(report).toContain('## 6. Where the time goes');
    expect(readFileSync(join(outDir, 'smoke.svg'), 'utf8')).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // The PNG is optional (it needs Chromium); when the report links it, it exists.
    if (results.chart.png) expect(existsSync(join(outDir, results.chart.png))).toBe(true);
    expect(results.mode).toBe('smoke');
    expect(results.schema).toBe(2);
    expect(results.temporal.argv).toContain('--db-filename');
    // The server's tuning is on the command line the run used.
    for (const setting of results.tuning!.settings) expect(results.temporal.argv.join(' ')).toContain(setting.args.join(' '));
    expect(results.peers).toBeNull();
    expect(results.ablation).toBeNull();
  });

  it("compares with the bare baseline of the activity kind retrysafe's checkout recorded", () => {
    const kind = results.activityKind!;
    expect(['regular', 'local']).toContain(kind.used);
    expect(kind.detected).toBe(kind.used);
    const checkout = results.timeline!.find((t) => t.kind === 'checkout')!;
    const bare = results.timeline!.find((t) => t.kind === 'bare3')!;
    expect(checkout.stepNames).toEqual(['reserve_items', 'charge_payment', 'confirm_reservation']);
    expect(bare.stepNames).toEqual(['noop', 'noop', 'noop']);
    // The same kind shows as the same phases in both histories.
    const stepPhases = (t: typeof checkout) => t.phases.map((p) => p.phase).filter((p) => p.startsWith('step'));
    expect(stepPhases(bare)).toEqual(stepPhases(checkout));
    expect(checkout.startToCloseMs).toBeGreaterThan(0);
  });

  it('judges every verdict from the run, and leaves the peer figures unmeasured without --peers', () => {
    const verdicts = results.verdicts!;
    expect(verdicts).toHaveLength(6);
    expect(verdicts.filter((v) => v.met === 'not measured').map((v) => v.figure)).toEqual([
      "checkout c=1 p50 ÷ Restate's (same run)",
      "checkout c=4 ops/s ÷ DBOS's (same run)",
      "replay p50 ÷ Restate's replay p50 (checkout, c=1)",
    ]);
    for (const v of verdicts.filter((x) => x.figure.startsWith('R'))) expect(v.value).not.toBeNull();
    expect(verdicts.at(-1)).toMatchObject({ figure: 'contention: executions, effects per key', now: '1, 1', met: 'moonshot' });
  });

  it('under 100 identical concurrent requests, starts one execution and moves money once', () => {
    expect(results.contention.map((t) => t.type).sort()).toEqual(['checkout', 'payment']);
    for (const trial of results.contention) {
      expect(trial.requests).toBe(100);
      expect(trial.statuses).toEqual({ 200: 100 });
      expect(trial.executions).toBe(1);
      // At most one answer says it started the operation: none when the winning start
      // outlived the API's engine deadline (503, then its retry is a replay).
      expect(trial.claimsWon).toBeLessThanOrEqual(1);
      expect(trial.winners).toBeLessThanOrEqual(1);
      expect(trial.charges).toBe(1);
      expect(trial.distinctOutcomes).toBe(1);
      if (trial.type === 'checkout') expect(trial.unitsTaken).toBe(1);
    }
  });

  it('measures every scenario without errors, and replays make no Temporal call', () => {
    const kinds = new Set(results.scenarios.map((s) => `${s.kind}@${s.concurrency}`));
    for (const c of [1, 4]) {
      for (const kind of ['payment', 'checkout', 'bare1', 'bare3', 'replay', 'plain', 'replay-checkout'])
        expect(kinds).toContain(`${kind}@${c}`);
    }
    for (const s of results.scenarios) {
      expect(s.errors, `${s.kind} c=${s.concurrency}: ${s.errorSamples.join('; ')}`).toBe(0);
      expect(s.ops).toBeGreaterThan(0);
      if (s.kind === 'replay') expect(s.usage.rpcs).toEqual({});
    }
    expect(results.ratios.map((r) => r.concurrency)).toEqual([1, 4]);
    // Bookkeeping shows in the history: retrysafe's payment has more events than the bare workflow.
    const events = (kind: string) => results.history.find((h) => h.kind === kind)!.historyEvents;
    expect(events('payment')).toBeGreaterThan(events('bare1'));
    expect(events('checkout')).toBeGreaterThan(events('bare3'));
  });
});
