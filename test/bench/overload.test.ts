// `npm run bench -- --overload` end to end, in its smallest mode: three fresh engines (as
// shipped, fairness off, a rate for the flooding tenant), each flooded by one tenant while
// another pays one at a time, and the audit after each. What must hold whatever the
// machine's speed: nothing accepted was lost or doubled, every refusal was honest, the
// configured rate refused the flood with 429s, and the report holds the section alone. No
// timing is asserted.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BenchResults } from '../../tools/bench/results.js';
import { AS_SHIPPED, FAIRNESS_OFF, TENANT_RATE } from '../../tools/bench/scenarios/overload-figures.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run bench -- --overload --smoke', () => {
  let outDir: string;
  let results: BenchResults;
  let run: { exitCode?: number; stdout: string; stderr: string };

  beforeAll(async () => {
    outDir = mkdtempSync(join(inject('tmpRoot'), 'bench-overload-'));
    run = await execa(
      process.execPath,
      ['--import', 'tsx', 'tools/bench/main.ts', '--overload', '--smoke', '--out', outDir, '--name', 'overload'],
      { cwd: ROOT, reject: false, timeout: 480_000, env: { LOG_PRETTY: '0' }, stdin: 'ignore' },
    );
    if (run.exitCode === 0) results = JSON.parse(readFileSync(join(outDir, 'overload.json'), 'utf8')) as BenchResults;
  }, 490_000);

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('exits 0 and writes the results and a report of the section alone, without a latency chart', () => {
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const report = readFileSync(join(outDir, 'overload.md'), 'utf8');
    expect(report.split('\n').filter((l) => l.startsWith('## '))).toEqual([
      '## Verdicts',
      '## 10. Overload and fairness: one tenant floods, another pays one at a time',
      '## Machine, versions, flags',
    ]);
    expect(existsSync(join(outDir, 'overload.svg'))).toBe(false);
    expect(results.command).toBe('npm run bench -- --smoke --overload');
    expect(results.scenarios).toEqual([]);
    expect(results.verdicts!.map((v) => v.figure)).toHaveLength(3);
  });

  it('runs each configuration on its own engine: fairness on, fairness off, and a rate for the flooding tenant', () => {
    const o = results.overload!;
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
    const o = results.overload!;
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
    expect(results.verdicts!.at(-1)).toMatchObject({ now: 'all', met: 'moonshot' });
  });
});
