// The verdicts table: the run's stored verdicts as they were judged, or, for a run that
// stored none, judged now from its own numbers.
import { describe, expect, it } from 'vitest';
import { verdicts } from '../../../bench/report/verdicts.js';
import { fixture, linesStarting, render } from './fixture.js';

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
});
