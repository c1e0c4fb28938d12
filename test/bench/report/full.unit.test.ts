// The whole report, rendered from real runs' results, against what the renderer wrote for
// them: the committed report of 2026-12-02 (a full --peers run, every section present),
// and for the older run before the optimizations (no peers, verdicts, timeline or
// ablation) the renderer's output captured before it was split into sections, since that
// run's own committed report predates today's layout.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { markdownReport } from '../../../tools/bench/report/index.js';
import type { BenchResults } from '../../../tools/bench/results.js';

const RESULTS = new URL('../../../tools/bench/results/', import.meta.url);
const read = (url: URL) => readFileSync(url, 'utf8');
const results = (name: string) => JSON.parse(read(new URL(`${name}.json`, RESULTS))) as BenchResults;
const files = (name: string) => ({ json: `${name}.json`, svg: `${name}.svg`, png: `${name}.png` });

describe('the benchmark report', () => {
  it('renders the 2026-12-02 run exactly as its committed report', () => {
    // Nothing in a report depends on when it is rendered: every figure, date and duration is in the JSON.
    const expected = read(new URL('2026-12-02.md', RESULTS));
    expect(markdownReport(results('2026-12-02'), files('2026-12-02'))).toBe(expected);
  });

  it('renders a run without peers, verdicts, timeline or ablation as the renderer did before the split', () => {
    const name = '2026-11-30-before-optimizations';
    const expected = read(new URL(`${name}.old.md`, import.meta.url));
    expect(markdownReport(results(name), files(name))).toBe(expected);
  });
});
