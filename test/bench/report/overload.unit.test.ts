// The overload section: per configuration and flood level, the steady tenant's latency
// against its own alone, the flooding tenant's goodput against the engine's throughput and
// the answers each got; the audit; and a run of the section alone, reported by itself.
import { describe, expect, it } from 'vitest';
import { markdownReport } from '../../../tools/bench/report/index.js';
import { overload } from '../../../tools/bench/report/overload.js';
import { fixture, FILES, lines, linesStarting, overloadRun, render } from './fixture.js';

const withOverload = () => Object.assign(fixture(), { overload: overloadRun() });

describe('report overload', () => {
  it('prints nothing for a run without the section', () => {
    expect(lines(overload)).toEqual([]);
    expect(lines(overload, Object.assign(fixture(), { overload: null }))).toEqual([]);
  });

  it("shows each flood level: B's p50 and p99 against alone, A's goodput against c=32, both tenants' answers", () => {
    const text = render(overload, withOverload());
    expect(text.startsWith('## 10. Overload and fairness: one tenant floods, another pays one at a time\n\n')).toBe(true);
    expect(linesStarting(text, '| as shipped', '| fairness off')).toEqual([
      '| as shipped: fairness on, default admission | 200 | 40.0 / 60.0 | 60.0 / 120 | 10 | 1.50 | 2.00 | 45.0 | 50.0 | 0.90 | 2400×503 engine_busy, 900×200 | 10×200 | 0 / 0 |',
      '| as shipped: fairness on, default admission | 400 | 40.0 / 60.0 | 150 / 300 | 10 | 3.75 | 5.00 | 40.0 | 50.0 | 0.80 | 6100×503 engine_busy, 800×200, 3×202 | 10×200 | 0 / 0 |',
      '| fairness off, default admission | 200 | 40.0 / 60.0 | 120 / 240 | 10 | 3.00 | 4.00 | 45.0 | 50.0 | 0.90 | 2400×503 engine_busy, 900×200 | 10×200 | 0 / 0 |',
      '| fairness off, default admission | 400 | 40.0 / 60.0 | 300 / 600 | 10 | 7.50 | 10.00 | 40.0 | 50.0 | 0.80 | 6100×503 engine_busy, 800×200, 3×202 | 10×200 | 0 / 0 |',
      '| as shipped: fairness on, default admission | none (default) | 1743 | 1743 | 1743 | tenant-a ✅, tenant-b ✅ | 0 | ✅ |',
      '| fairness off, default admission | none (default) | 1743 | 1743 | 1743 | tenant-a ✅, tenant-b ✅ | 0 | ✅ |',
    ]);
    expect(text).toContain('**Time budget ran out** (6 min): left out fairness on, a rate for tenant A.');
    expect(text).not.toContain('**Problems**');
  });

  it('shows an audit that failed: an account that moved more than its successes, a refusal without Retry-After', () => {
    const r = withOverload();
    const row = r.overload!.rows[1]!;
    row.tenantLimits = 'tenant-a=25/s';
    row.audit.accounts[0]!.moved += 1250;
    Object.assign(row.audit, {
      badAnswers: 2,
      badSamples: ['500', '503 engine_busy without Retry-After'],
      ok: false,
      problems: ['tenant-a: a moved 1251250, its successes took 1250000'],
    });
    const text = render(overload, r);
    expect(linesStarting(text, '| fairness off, default admission | `')).toEqual([
      '| fairness off, default admission | `tenant-a=25/s` | 1743 | 1743 | 1743 | tenant-a ❌ 2130000 ≠ 2128750, tenant-b ✅ | 2 (500, 503 engine_busy without Retry-After) | ❌ |',
    ]);
    expect(text).toContain(
      '**Problems**: fairness off, default admission: tenant-a: a moved 1251250, its successes took 1250000.',
    );
  });

  it('reports a run of the section alone with its verdicts, the section and the machine only', () => {
    const r = withOverload();
    r.scenarios = [];
    r.ratios = [];
    delete r.verdicts;
    const report = markdownReport(r, FILES);
    expect(report.split('\n').filter((l) => l.startsWith('## '))).toEqual([
      '## Verdicts',
      '## 10. Overload and fairness: one tenant floods, another pays one at a time',
      '## Machine, versions, flags',
    ]);
    expect(report).toContain("Each computed from this run's own numbers: the overload section alone (`--overload`)");
    expect(linesStarting(report, '| tenant-', '| overload:')).toEqual([
      "| tenant-b p50 during tenant-a's flood ÷ alone (as shipped, worst flood) | 3.75× | ≤ 2× | ≤ 1.2× | ❌ missed | worst at tenant-a c=400: 150.0 ms ÷ 40.0 ms (p99 ×5.00) |",
      "| tenant-a's goodput during its flood ÷ the throughput at c=32 (as shipped, worst flood) | 0.80 | ≥ 0.9 | ≥ 1 | ❌ missed | worst at c=400: 40.0/s ÷ 50.0/s at c=32 |",
      '| overload: every accepted operation terminal, each account moved exactly its successes, refusals honest | all | all | all | 🌙 moonshot | 3486 accepted operations, 2 configurations |',
    ]);
  });
});
