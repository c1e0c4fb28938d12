// The bench report, rendered from the results of the last full run (a --peers run with every
// section): it prints every figure its committed report printed, its tables hold the figures
// the results say (recomputed here from the scenarios, not read back from the report), and a
// section whose phase did not run is left out. No sentence is pinned: a table is found by its
// heading and its columns by their names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { markdownReport } from '../../tools/bench/report.js';
import type { ScenarioResult } from '../../tools/bench/load.js';
import { computeRatios, find, type BenchResults } from '../../tools/bench/results.js';

const RUN = '2026-12-02-final';
const read = (file: string) => readFileSync(new URL(`../../tools/bench/results/${file}`, import.meta.url), 'utf8');

/** A fresh copy of the run's results each call: tests change them. */
function results(): BenchResults {
  const r = JSON.parse(read(`${RUN}.json`)) as BenchResults;
  r.ratios = computeRatios(
    r.scenarios,
    r.ratios.map((x) => x.concurrency),
    r.operations,
  );
  return r;
}

const headings = (md: string) => md.split('\n').filter((l) => /^#{2,3} /.test(l));

/** The first table under the heading that starts with `heading`, as rows of cells keyed by the column names. */
function tableUnder(md: string, heading: string, nth = 0): Array<Record<string, string>> {
  const lines = md.split('\n');
  const at = lines.findIndex((l) => /^#{2,3} /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const tables: string[][] = [];
  for (let i = at + 1; i < lines.length && !/^#{2,3} /.test(lines[i]!); i++) {
    if (!lines[i]!.startsWith('|')) continue;
    if (!lines[i - 1]!.startsWith('|')) tables.push([]);
    tables.at(-1)!.push(lines[i]!);
  }
  const cells = (row: string) => row.slice(2, -2).split(' | ');
  const [head, , ...rows] = tables[nth]!;
  // Repeated column names (`vs bare`) keep their first cell.
  return rows.map((row) =>
    Object.fromEntries(
      cells(row)
        .map((c, i) => [cells(head!)[i]!, c])
        .reverse(),
    ),
  );
}

const f1 = (v: number) => v.toFixed(1);
const f2 = (v: number) => v.toFixed(2);

describe('the bench report', () => {
  it('prints every figure the committed report of the last full run printed, at the same precision or better', () => {
    const now = markdownReport(results(), RUN);
    const printed = new Set(
      (now.match(/\d+(?:\.\d+)?/g) ?? []).flatMap((t) => [t, ...[0, 1, 2].map((d) => Number(t).toFixed(d))]),
    );
    const lost = (read(`${RUN}.md`).match(/\d+(?:\.\d+)?/g) ?? []).filter((t) => !printed.has(t));
    expect(lost).toEqual([]);
  });

  it('has a section for each phase of a full run, in order', () => {
    expect(headings(markdownReport(results(), RUN)).filter((h) => h.startsWith('## '))).toEqual([
      '## Verdicts',
      '## Ratios (and their targets)',
      '## 1–2. New operations vs bare Temporal',
      '## 3. Replays vs a plain Fastify endpoint',
      '## 4. Contention: 100 identical concurrent requests for one new key',
      '## 5. The peers: the same checkout on Restate and on DBOS Transact',
      '## 6. Where the time goes',
      '## 7. State transitions and history per operation',
      '## 8. CPU time and peak memory per operation',
      "## 9. Ablation of the embedded server's tuning",
      '## 10. Overload and fairness: one tenant floods, another pays one at a time',
      '## Worker start-up',
      '## Machine, versions, flags',
    ]);
  });

  it("shows each operation's rates and latencies beside its no-op floor and the same work, with R1 and R2 from them", () => {
    const r = results();
    const md = markdownReport(r, RUN);
    for (const op of r.operations) {
      const rows = tableUnder(md, `${op.own} vs bare workflow`);
      expect(rows.map((x) => x.c)).toEqual(['1', '8', '32']);
      for (const row of rows) {
        const c = Number(row.c);
        const [own, bare, fair] = [op.own, op.bare, op.fair].map((k) => find(r.scenarios, k, c)!) as [
          ScenarioResult,
          ScenarioResult,
          ScenarioResult,
        ];
        expect(row[`${op.own} ops/s`]).toBe(f1(own.steadyOpsPerSec));
        expect(row['same work ops/s']).toBe(f1(fair.steadyOpsPerSec));
        expect(row.R1).toBe(f2(own.steadyOpsPerSec / bare.steadyOpsPerSec));
        expect(row['R2 p99']).toBe(f2(own.latencyMs.p99 / bare.latencyMs.p99));
        expect(row['n (each)']).toBe(`${own.ops} / ${bare.ops} / ${fair.ops}`);
      }
    }
  });

  it('divides the CPU of every process doing the work by the same-work baseline’s, per concurrency', () => {
    const r = results();
    const rows = tableUnder(markdownReport(r, RUN), 'Ratios');
    const checkout = rows.find((x) => x.ratio!.startsWith('CPU checkout ÷ same work'))!;
    const perOp = (kind: string, parts: string[]) => {
      const s = find(r.scenarios, kind, 32)!;
      return parts.reduce((a, p) => a + (s.usage.cpuMs[p] ?? 0), 0) / s.ops;
    };
    const ours = perOp('checkout', ['api', 'worker', 'temporal', 'bank', 'reservations']);
    const bare = perOp('bare-http-checkout', ['baselineWorker', 'temporal', 'bank', 'reservations', 'orchestrator']);
    expect(checkout['c=32']).toBe(f2(ours / bare));
    expect(checkout.target).toBe('≤ 1.15');
    expect(r.verdicts.find((v) => v.figure.startsWith('CPU per checkout'))!.now).toBe(`${f2(ours / bare)}×`);
  });

  it('meters every scenario, ours and the peers’, by the processes that did its work', () => {
    const r = results();
    const rows = tableUnder(markdownReport(r, RUN), '8. CPU time');
    expect(rows).toHaveLength(r.scenarios.length);
    for (const [row, s] of rows.map((x, i) => [x, r.scenarios[i]!] as const)) {
      expect(row.c).toBe(String(s.concurrency));
      expect(row['all ours ms/op']).toBe(f2(Object.values(s.usage.cpuMs).reduce((a, b) => a + b, 0) / s.ops));
    }
    const dbos = rows.find((x) => x.scenario === 'checkout on DBOS' && x.c === '32')!;
    const s = find(r.scenarios, 'dbos', 32)!;
    expect(dbos['PostgreSQL ms/op']).toBe(f2(s.usage.cpuMs.postgres! / s.ops));
    // A peer's row names only its own processes.
    expect(dbos['worker ms/op']).toBe('');
    const bare = rows.find((x) => x.scenario === 'bare, 3 activities' && x.c === '1')!;
    expect(bare['worker ms/op']).toBe(
      f2(find(r.scenarios, 'bare3', 1)!.usage.cpuMs.baselineWorker! / find(r.scenarios, 'bare3', 1)!.ops),
    );
  });

  it("shows each contention trial's executions and effects, and every overload configuration's audit", () => {
    const r = results();
    const md = markdownReport(r, RUN);
    const trials = tableUnder(md, '4. Contention');
    expect(trials.map((t) => [t.type, t.executions, t.charges])).toEqual(
      r.contention.map((t) => [
        t.type,
        String(t.executions),
        Object.entries(t.effects)
          .flatMap(([k, n]) => (k.startsWith('account ') ? [n] : []))
          .join(' · '),
      ]),
    );
    const audit = tableUnder(md, '10. Overload', 1);
    expect(audit.map((a) => [a.configuration, a.accepted, a['nothing lost or doubled']])).toEqual(
      r.overload!.rows.map((row) => [row.name, String(row.audit.accepted), row.audit.ok ? '✅' : '❌']),
    );
  });

  it('leaves out the sections of the phases a run did not have, and their verdicts are not measured', () => {
    const r = results();
    Object.assign(r, { peers: null, ablation: null, overload: null, startup: null, timeline: undefined });
    r.scenarios = r.scenarios.filter((s) => !/restate|dbos/.test(s.kind));
    const md = markdownReport(r, RUN);
    for (const gone of ['## 5.', '## 6.', '## 9.', '## 10.', '## Worker start-up'])
      expect(
        headings(md).some((h) => h.startsWith(gone)),
        gone,
      ).toBe(false);
  });

  it('reports a run of the overload section alone with its verdicts, the section and the machine only', () => {
    const r = results();
    Object.assign(r, { scenarios: [], contention: [], history: [], operations: [], ratios: [] });
    expect(headings(markdownReport(r, RUN))).toEqual([
      '## Verdicts',
      '## 10. Overload and fairness: one tenant floods, another pays one at a time',
      '## Machine, versions, flags',
    ]);
  });

  it('links the chart and the raw numbers beside it, and names what the time budget left out', () => {
    const r = results();
    r.skipped = ['payment c=32 round 3'];
    const md = markdownReport(r, RUN);
    expect(md).toContain(`![latency chart](${RUN}.svg)`);
    expect(md).toContain(`[${RUN}.json](${RUN}.json)`);
    expect(md).toContain('payment c=32 round 3');
  });
});
