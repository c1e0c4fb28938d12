// A small run to render sections from: the results of the 2026-12-02 full --peers run
// (bench/results/2026-12-02.json) cut to c=1 and c=32, without latency samples, with two
// contention trials, three ablation rows and one tuning setting. Its figures are real, so
// a section's rows for c=1 and c=32 read as in that run's committed report.
import { readFileSync } from 'node:fs';
import { reportContext, type ReportFiles, type Section } from '../../../bench/report/context.js';
import type { BenchResults } from '../../../bench/results.js';
import type { Kind, ScenarioResult } from '../../../bench/scenarios/measure.js';

const TEXT = readFileSync(new URL('fixture.json', import.meta.url), 'utf8');

export const FILES: ReportFiles = { json: 'run.json', svg: 'run.svg', png: 'run.png' };

/** A fresh copy each call: tests change it to take parts away. */
export function fixture(): BenchResults {
  return JSON.parse(TEXT) as BenchResults;
}

/** A section's lines for a run (none: the section is left out of the report). */
export function lines(section: Section, r: BenchResults = fixture(), files: ReportFiles = FILES): string[] {
  return section(reportContext(r, files));
}

/** What a section prints for a run, as the Markdown it adds to the report. */
export function render(section: Section, r: BenchResults = fixture(), files: ReportFiles = FILES): string {
  return lines(section, r, files).join('\n');
}

export function scenario(r: BenchResults, kind: Kind, c: number): ScenarioResult {
  const s = r.scenarios.find((x) => x.kind === kind && x.concurrency === c);
  if (!s) throw new Error(`no ${kind} c=${c} in the fixture`);
  return s;
}

/** The lines of `text` that start with `prefix` (a table's rows for one system, say). */
export function linesStarting(text: string, prefix: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(prefix));
}
