// CI smoke of `npm run bench`: the bench runs as a process in its smallest mode, into a
// temporary results dir, and must write a report that parses and shows, for every
// operation type of the registry, its rows beside the no-op and the same-work baselines;
// under 100 identical concurrent requests for one key, one execution and one downstream
// effect; its verdicts, judged from the run, and where the time of a checkout went. It runs
// without --peers and without the overload section, so nothing is installed and no peer
// runs (their figures read "not measured"). No timing is asserted: performance numbers
// belong to the bench's own report.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchRun } from './bench-run.js';
import { builtInCatalog } from '../../workflows/catalog.js';

describe('npm run bench -- --smoke', () => {
  const bench = benchRun('smoke', ['--smoke'], 240_000);

  it('exits 0 and writes the JSON results, the Markdown report and the chart', () => {
    expect(bench.run.exitCode, `${bench.run.stdout}\n${bench.run.stderr}`).toBe(0);
    const report = readFileSync(join(bench.outDir, 'smoke.md'), 'utf8');
    expect(report).toMatch(/^# retrysafe benchmark/);
    expect(report).toContain('## Verdicts');
    expect(report).toContain('## Ratios');
    expect(report).toContain('## 4. Contention');
    expect(report).toContain('## 6. Where the time goes');
    expect(readFileSync(join(bench.outDir, 'smoke.svg'), 'utf8')).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(bench.results.chart.svg).toBe('smoke.svg');
    expect(report).toContain('](smoke.svg)');
    expect(bench.results.mode).toBe('smoke');
    expect(bench.results.schema).toBe(3);
    expect(bench.results.temporal.argv).toContain('--db-filename');
    // The server's tuning is on the command line the run used.
    for (const setting of bench.results.tuning!.settings)
      expect(bench.results.temporal.argv.join(' ')).toContain(setting.args.join(' '));
    expect(bench.results.peers).toBeNull();
    expect(bench.results.ablation).toBeNull();
    expect(bench.results.overload).toBeNull();
  });

  it("compares with the bare baseline of the activity kind retrysafe's checkout recorded", () => {
    const kind = bench.results.activityKind!;
    expect(['regular', 'local']).toContain(kind.used);
    expect(kind.detected).toBe(kind.used);
    const checkout = bench.results.timeline!.find((t) => t.kind === 'checkout')!;
    const bare = bench.results.timeline!.find((t) => t.kind === 'bare3')!;
    expect(checkout.stepNames).toEqual(['reserve_items', 'charge_payment', 'confirm_reservation']);
    expect(bare.stepNames).toEqual(['noop', 'noop', 'noop']);
    // The same kind shows as the same phases in both histories.
    const stepPhases = (t: typeof checkout) => t.phases.map((p) => p.phase).filter((p) => p.startsWith('step'));
    expect(stepPhases(bare)).toEqual(stepPhases(checkout));
    expect(checkout.startToCloseMs).toBeGreaterThan(0);
  });

  it('judges every verdict from the run, and leaves the peer and overload figures unmeasured without them', () => {
    const verdicts = bench.results.verdicts!;
    // Two peer figures, R1, R1′, CPU per operation of each type, the API's CPU, R2, the peers' replay, contention, and three of the overload.
    expect(verdicts).toHaveLength(11 + builtInCatalog.types.length);
    expect(verdicts.filter((v) => v.met === 'not measured').map((v) => v.figure)).toEqual([
      "checkout c=1 p50 ÷ Restate's (same run)",
      "checkout c=4 ops/s ÷ DBOS's (same run)",
      "replay p50 ÷ Restate's replay p50 (checkout, c=1)",
      "tenant-b p50 during tenant-a's flood ÷ alone (as shipped, worst flood)",
      "tenant-a's goodput during its flood ÷ the throughput at c=32 (as shipped, worst flood)",
      'overload: every accepted operation terminal, each account moved exactly its successes, refusals honest',
    ]);
    for (const v of verdicts.filter((x) => /^(R|CPU|API)/.test(x.figure))) expect(v.value, v.figure).not.toBeNull();
    expect(verdicts.map((v) => v.figure)).toContain('R1′: ops/s ÷ bare Temporal making the same HTTP calls, c = 1, 4 (worst)');
    for (const type of builtInCatalog.types)
      expect(verdicts.map((v) => v.figure)).toContain(`CPU per ${type} ÷ bare Temporal making the same HTTP calls (worst c)`);
    expect(verdicts.find((v) => v.figure.startsWith('contention'))).toMatchObject({ now: '1, 1', met: 'moonshot' });
  });

  it('under 100 identical concurrent requests, starts one execution and moves money once, for every type', () => {
    expect(bench.results.contention.map((t) => t.type).sort()).toEqual([...builtInCatalog.types].sort());
    for (const trial of bench.results.contention) {
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
      // Every account and SKU the request names moved exactly once (a transfer: its debit and its credit).
      const effects = Object.entries(trial.effects!);
      expect(effects.length).toBe(trial.type === 'transfer' ? 2 : trial.type === 'checkout' ? 2 : 1);
      for (const [what, n] of effects) expect(n, what).toBe(1);
    }
  });

  it('measures every scenario without errors, and replays make no Temporal call', () => {
    const kinds = new Set(bench.results.scenarios.map((s) => `${s.kind}@${s.concurrency}`));
    // Every type of the registry, each beside its no-op floor and the same work on bare Temporal.
    expect(bench.results.operations!.map((o) => o.own)).toEqual(builtInCatalog.types);
    expect(bench.results.operations!.find((o) => o.own === 'transfer')).toMatchObject({
      bare: 'bare2',
      fair: 'bare-http-transfer',
    });
    for (const c of [1, 4]) {
      for (const op of bench.results.operations!)
        for (const kind of [op.own, op.bare, op.fair!]) expect(kinds).toContain(`${kind}@${c}`);
      for (const kind of ['replay', 'plain', 'replay-checkout']) expect(kinds).toContain(`${kind}@${c}`);
    }
    for (const s of bench.results.scenarios) {
      expect(s.errors, `${s.kind} c=${s.concurrency}: ${s.errorSamples.join('; ')}`).toBe(0);
      expect(s.ops).toBeGreaterThan(0);
      if (s.kind === 'replay') expect(s.usage.rpcs).toEqual({});
    }
    expect(bench.results.ratios.map((r) => r.concurrency)).toEqual([1, 4]);
    // Bookkeeping shows in the history: retrysafe's payment has more events than the bare workflow.
    const events = (kind: string) => bench.results.history.find((h) => h.kind === kind)!.historyEvents;
    expect(events('payment')).toBeGreaterThan(events('bare1'));
    expect(events('checkout')).toBeGreaterThan(events('bare3'));
    // The same work without the books: as many events as the no-op floor, fewer than retrysafe's.
    for (const op of bench.results.operations!) {
      // Its steps are local activities, one marker each, as the no-op floor's are when retrysafe's are local.
      if (bench.results.activityKind!.used === 'local') expect(events(op.fair!)).toBe(events(op.bare));
      expect(events(op.own)).toBeGreaterThan(events(op.fair!));
    }
  });
});
