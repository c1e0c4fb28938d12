// The verdicts table: the run's stored verdicts as they were judged, or, for a run that
// stored none, judged now from its own numbers.
import { describe, expect, it } from 'vitest';
import { verdicts } from '../../../tools/bench/report/verdicts.js';
import { computeVerdicts } from '../../../tools/bench/verdicts.js';
import { fixture, linesStarting, overloadRun, render, sameWorkRun } from './fixture.js';

const figure = (r: Parameters<typeof computeVerdicts>[0], start: string) =>
  computeVerdicts(r).filter((v) => v.figure.startsWith(start));

describe('report verdicts', () => {
  it('shows each stored verdict with its target, moonshot, mark and where it came from', () => {
    const text = render(verdicts);
    expect(text.startsWith('## Verdicts\n\n')).toBe(true);
    expect(text).toContain(
      'through the same HTTP driver at the same concurrencies. R1 and R2 divide by bare Temporal on the same server ' +
        "with activities of the same kind (**local**, read off the probe checkout's history).",
    );
    expect(linesStarting(text, '| ')).toEqual([
      '| figure | now | target | moonshot | verdict | from |',
      "| checkout c=1 p50 ÷ Restate's (same run) | 3.64× | ≤ 2× | ≤ 1.5× | ❌ missed | 99.0 ms ÷ 27.2 ms; bare Temporal, 3 no-op steps: 2.30× |",
      "| checkout c=32 ops/s ÷ DBOS's (same run) | 0.28 | ≥ 0.5 | ≥ 1 | ❌ missed | 16.7/s ÷ 60.0/s; bare Temporal, 3 no-op steps: 0.36 |",
      '| R1: ops/s ÷ bare Temporal, same server, same activity kind, c = 1, 8, 32 (worst) | 0.63 | ≥ 0.9 | ≥ 0.95 | ❌ missed | worst at checkout c=1 |',
      '| R2 p99 (worst) | 1.71 | ≤ 1.25 | ≤ 1.1 | ❌ missed | worst at checkout c=1 |',
      "| replay p50 ÷ Restate's replay p50 (checkout, c=1) | 0.14× | ≤ 1× | ≤ 0.5× | 🌙 moonshot | 0.97 ms ÷ 7.16 ms |",
      '| contention: executions, effects per key | 1, 1 | 1, 1 | 1, 1 | 🌙 moonshot | 6 trials of 100 identical requests |',
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it("judges a run that stored no verdicts from its own numbers (this fixture's two concurrencies and two trials)", () => {
    const r = fixture();
    delete r.verdicts;
    const text = render(verdicts, r);
    expect(text).toContain(
      '| R1: ops/s ÷ bare Temporal, same server, same activity kind, c = 1, 32 (worst) | 0.63 | ≥ 0.9 | ≥ 0.95 | ❌ missed | worst at checkout c=1 |',
    );
    expect(text).toContain(
      '| contention: executions, effects per key | 1, 1 | 1, 1 | 1, 1 | 🌙 moonshot | 2 trials of 100 identical requests |',
    );
  });

  it('says the peers were not raced and reads their figures as not measured, and regular activities when the kind is unknown', () => {
    const r = fixture();
    delete r.verdicts;
    r.peers = null;
    delete r.activityKind;
    const text = render(verdicts, r);
    expect(text).toContain(
      'at the same concurrencies — not in this run (`npm run bench -- --peers`). R1 and R2 divide by bare Temporal on ' +
        'the same server with activities of the same kind (regular).',
    );
    expect(text).toContain(
      "| checkout c=1 p50 ÷ Restate's (same run) | n/a | ≤ 2× | ≤ 1.5× | — not measured | restate not in this run: npm run bench -- --peers |",
    );
  });

  it("judges R1′, the CPU of each operation against the same work and the API's CPU per new operation", () => {
    const r = sameWorkRun();
    expect(figure(r, 'R1′')).toEqual([
      {
        figure: 'R1′: ops/s ÷ bare Temporal making the same HTTP calls, c = 1, 32 (worst)',
        now: '0.50',
        value: expect.closeTo(9.97 / 20, 3),
        target: '≥ 0.9',
        moonshot: '≥ 0.95',
        met: 'missed',
        note: 'worst at checkout c=1',
      },
    ]);
    // The worse of c=1 and c=32 for each: payment 84.33 ÷ 94 and 90.73 ÷ 94; checkout 112.93 ÷ 100 and 104.35 ÷ 100.
    expect(figure(r, 'CPU per').map((v) => [v.figure, v.now, v.met, v.note])).toEqual([
      ['CPU per payment ÷ bare Temporal making the same HTTP calls (worst c)', '0.97×', 'moonshot', 'worst at c=32'],
      ['CPU per checkout ÷ bare Temporal making the same HTTP calls (worst c)', '1.13×', 'target', 'worst at c=1'],
    ]);
    expect(figure(r, 'API CPU').map((v) => [v.now, v.target, v.met, v.note])).toEqual([
      ['10.77 ms', '≤ 5 ms', 'missed', 'worst at payment c=32'],
    ]);
    // Runs before the same-work baseline have none of these lines.
    const old = fixture();
    expect(figure(old, 'R1′').concat(figure(old, 'CPU per'), figure(old, 'API CPU'))).toEqual([]);
  });

  it('judges the overload as shipped at its worst flood, and whether anything was lost across every configuration', () => {
    const r = Object.assign(fixture(), { overload: overloadRun() });
    const lines = computeVerdicts(r).slice(-3);
    expect(lines.map((v) => [v.now, v.met])).toEqual([
      ['3.75×', 'missed'],
      ['0.80', 'missed'],
      ['all', 'moonshot'],
    ]);
    // Fairness off is slower, but the targets are the shipped configuration's.
    const shipped = r.overload.rows[0]!;
    shipped.floods = shipped.floods.slice(0, 1);
    shipped.floods[0]!.aGoodput = 50;
    expect(
      computeVerdicts(r)
        .slice(-3)
        .map((v) => [v.now, v.met]),
    ).toEqual([
      ['1.50×', 'target'],
      ['1.00', 'moonshot'],
      ['all', 'moonshot'],
    ]);
    r.overload.rows[1]!.audit.problems = ['tenant-b: 2 accepted operations not terminal (k: processing)'];
    expect(computeVerdicts(r).at(-1)).toMatchObject({
      now: '1 problem',
      met: 'missed',
      note: 'fairness off, default admission: tenant-b: 2 accepted operations not terminal (k: processing)',
    });
  });

  it('reads the overload as not measured when the run left it out, and as absent from runs before it', () => {
    const left = Object.assign(fixture(), { overload: null });
    expect(
      computeVerdicts(left)
        .slice(-3)
        .map((v) => [v.met, v.note]),
    ).toEqual([
      ['not measured', 'not in this run: npm run bench -- --overload'],
      ['not measured', 'not in this run: npm run bench -- --overload'],
      ['not measured', 'not in this run: npm run bench -- --overload'],
    ]);
    const skipped = Object.assign(fixture(), { overload: overloadRun() });
    skipped.overload.rows.shift();
    expect(
      computeVerdicts(skipped)
        .slice(-3, -1)
        .map((v) => [v.met, v.note]),
    ).toEqual([
      ['not measured', 'the configuration "as shipped: fairness on, default admission" did not run (time budget)'],
      ['not measured', 'the configuration "as shipped: fairness on, default admission" did not run (time budget)'],
    ]);
    expect(computeVerdicts(fixture()).at(-1)!.figure).toBe('contention: executions, effects per key');
  });
});
