// Re-renders the Markdown report and the chart of a run from its results JSON (schema 3), e.g.
// after a change to the report's layout: `node --import tsx tools/bench/render.ts <results.json>`.
// Ratios and verdicts are recomputed, so a change to how they are derived reaches the run too.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeChart } from './chart.js';
import { markdownReport } from './report.js';
import { computeRatios, resultsJson, type BenchResults } from './results.js';
import { computeVerdicts } from './verdicts.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: node --import tsx tools/bench/render.ts <results.json>');
  process.exit(64);
}
const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
const [dir, name] = [dirname(file), basename(file, '.json')];
results.ratios = computeRatios(
  results.scenarios,
  results.ratios.map((r) => r.concurrency),
  results.operations,
);
results.verdicts = computeVerdicts(results);
results.chart = { svg: writeChart(results, dir, name) };
writeFileSync(file, resultsJson(results));
writeFileSync(join(dir, `${name}.md`), markdownReport(results, name));
console.log(`rendered ${join(dir, `${name}.md`)}${results.chart.svg ? ` and ${results.chart.svg}` : ''}`);
