// `npm run bench -- --overload` end to end, in its smallest mode: three fresh engines (as
// shipped, fairness off, a rate for the flooding tenant), each flooded by one tenant while
// another pays one at a time, and the audit after each. What must hold whatever the
// machine's speed: nothing accepted was lost or doubled, every refusal was honest, the
// configured rate refused the flood with 429s, and the report holds the section alone. No
// timing is asserted.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchRun } from './bench-run.js';
import { AS_SHIPPED, FAIRNESS_OFF, TENANT_RATE } from '../../tools/bench/phases/overload.js';

describe('npm run bench -- --overload --smoke', () => {
  const bench = benchRun('overload', ['--overload', '--smoke'], 480_000);

  it('exits 0 and writes the results and a report of the section alone, without a latency chart', () => {
    expect(bench.run.exitCode, `${bench.run.stdout}\n${bench.run.stderr}`).toBe(0);
    const report = readFileSync(join(bench.outDir, 'overload.md'), 'utf8');
    expect(report.split('\n').filter((l) => l.startsWith('## '))).toEqual([
      '## Verdicts',
      '## 10. Overload and fairness: one tenant floods, another pays one at a time',
      '## Machine, versions, flags',
    ]);
    expect(existsSync(join(bench.outDir, 'overload.svg'))).toBe(false);
    expect(bench.results.command).toBe('npm run bench -- --smoke --overload');
    expect(bench.results.scenarios).toEqual([]);
    expect(bench.results.verdicts!.map((v) => v.figure)).toHaveLength(3);
  });

  it('runs each configuration on its own engine: fairness on, fairness off, and a rate for the flooding tenant', () => {
    const o = bench.results.overload!;
    expect(o.rows.map((r) => [r.name, r.fairness])).toEqual([
      [AS_SHIPPED, true],
      [FAIRNESS_OFF, false],
      [TENANT_RATE, true],
    ]);
    expect(o.rows[0]!.argv.join(' ')).toContain('matching.enableFairness=true');
    expect(o.rows[1]!.argv.join(' ')).not.toContain('enableFairness');
    expect(o.rows[2]!.tenantLimits).toMatch(/^tenant-a=\d+\/s$/);
    for (const row of o.rows) {
      expect(row.idle.ended).toBe(o.counts.idleOps);
      expect(row.floods.map((f) => f.concurrency)).toEqual(o.counts.floods);
      // The steady tenant's count, or as many as the flood's time bound let it make on a busy machine.
      for (const f of row.floods) expect(f.b.ended).toBeGreaterThan(0);
      for (const f of row.floods) expect(f.b.ended).toBeLessThanOrEqual(o.counts.floodOps);
    }
  });

  it('loses nothing, doubles nothing and refuses honestly; the configured rate refuses the flood with 429s', () => {
    const o = bench.results.overload!;
    for (const row of o.rows) {
      expect(row.audit.problems, row.name).toEqual([]);
      expect(row.audit.ok).toBe(true);
      expect(row.audit.accepted).toBeGreaterThan(0);
      expect(row.audit.terminal).toBe(row.audit.accepted);
      for (const a of row.audit.accounts) expect(a.moved, `${row.name} ${a.tenant}`).toBe(a.expected);
      expect(row.audit.badAnswers).toBe(0);
    }
    const rated = o.rows.find((r) => r.name === TENANT_RATE)!;
    expect(rated.floods.some((f) => (f.a.answers['429'] ?? 0) > 0)).toBe(true);
    // The steady tenant is never limited.
    for (const f of rated.floods) expect(f.b.answers['429']).toBeUndefined();
    expect(bench.results.verdicts!.at(-1)).toMatchObject({ now: 'all', met: 'moonshot' });
  });
});
