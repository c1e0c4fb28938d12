// Writes a run's results: judges its verdicts, then writes the JSON, the Markdown report and
// the latency chart (SVG, and PNG when Chromium is there) under the output folder, and logs
// the verdicts and what it wrote.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeChart } from './chart.js';
import { markdownReport } from './report/index.js';
import { resultsJson, type BenchResults } from './results.js';
import { ROOT } from './stack.js';
import { computeVerdicts } from './verdicts.js';

export async function writeResults(
  results: BenchResults,
  to: { outDir: string; started: number; log: (line: string) => void },
): Promise<void> {
  const { outDir, started, log } = to;
  const name = results.name;
  const png = await writeChart(results, outDir, name);
  results.chart = {
    svg: results.scenarios.length > 0 ? `${name}.svg` : '',
    png: png.ok ? `${name}.png` : null,
    pngNote: png.ok ? 'rendered by Chromium' : png.reason,
  };
  results.durationMs = Date.now() - started;
  results.verdicts = computeVerdicts(results);
  const jsonPath = join(outDir, `${name}.json`);
  writeFileSync(jsonPath, resultsJson(results));
  writeFileSync(
    join(outDir, `${name}.md`),
    markdownReport(results, { json: `${name}.json`, svg: `${name}.svg`, png: results.chart.png }),
  );
  for (const v of results.verdicts) log(`verdict: ${v.figure}: ${v.now} (target ${v.target}, moonshot ${v.moonshot}) → ${v.met}`);
  log(
    `wrote ${relative(ROOT, jsonPath)}, ${name}.md${results.chart.svg ? `, ${results.chart.svg}` : ''}${png.ok ? `, ${name}.png` : ` (no PNG: ${png.reason})`} in ` +
      `${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${results.machine.loadAverageEnd}`,
  );
}
