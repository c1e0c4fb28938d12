// The latency chart: one row per scenario, bars of p99 (light), p95 and p50 (dark) on a
// logarithmic axis (replays take a millisecond, sagas a hundred). Plain SVG, no library:
// a browser or a Markdown viewer shows it as it is.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from './load.js';
import { label } from './results.js';

/** Fixed colors by kind; an operation type's own kinds get the next pair of OPERATION_COLORS (its variants the lighter). */
const FIXED: Array<[RegExp, string]> = [
  [/^replay$/, '#059669'],
  [/^plain$/, '#94a3b8'],
  [/^replay-uncached$/, '#d97706'],
  [/^restate$/, '#0d9488'],
  [/^dbos$/, '#b45309'],
  [/^replay-restate$/, '#5eead4'],
  [/^replay-dbos$/, '#fcd34d'],
  [/^bare\d+$/, '#475569'],
  [/^bare\d+-tracked$/, '#94a3b8'],
  [/^bare-http-/, '#0891b2'],
  [/^replay-/, '#10b981'],
];
const OPERATION_COLORS = [
  ['#2563eb', '#93c5fd'],
  ['#7c3aed', '#c4b5fd'],
  ['#db2777', '#f9a8d4'],
  ['#ca8a04', '#fde047'],
];

function color(kind: string, types: string[]): string {
  const fixed = FIXED.find(([re]) => re.test(kind));
  if (fixed) return fixed[1];
  const type = kind.replace(/-direct$/, '');
  if (!types.includes(type)) types.push(type);
  return OPERATION_COLORS[types.indexOf(type) % OPERATION_COLORS.length]![type === kind ? 0 : 1]!;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (ms: number) =>
  ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 0.01 || ms === 0 ? ms.toFixed(2) : String(+ms.toPrecision(1));

export function latencyChartSvg(scenarios: ScenarioResult[], title: string): string {
  const rows = scenarios.filter((s) => s.latencyMs.n > 0);
  const [width, left, right, top, rowH] = [1000, 250, 250, 56, 20];
  // A gap between groups: new operations per concurrency, then replays.
  const groupOf = (s: ScenarioResult) => `${['replay', 'plain', 'replay-uncached'].includes(s.kind) ? 'r' : 'n'}${s.concurrency}`;
  let y = top;
  const placed = rows.map((s, i) => {
    if (i > 0 && groupOf(s) !== groupOf(rows[i - 1]!)) y += 10;
    y += rowH;
    return { s, y: y - rowH };
  });
  const minDecade = Math.floor(Math.log10(Math.max(Math.min(...rows.map((s) => s.latencyMs.p50)), 0.01) / 1.2));
  const maxDecade = Math.ceil(Math.log10(Math.max(Math.max(...rows.map((s) => s.latencyMs.p99)), 0.02) * 1.2));
  const plotW = width - left - right;
  const x = (ms: number) => left + ((Math.log10(Math.max(ms, 10 ** minDecade)) - minDecade) / (maxDecade - minDecade)) * plotW;
  const x0 = x(10 ** minDecade);
  const types: string[] = [];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 48}" viewBox="0 0 ${width} ${y + 48}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(title)}</text>`,
    `<text x="${left}" y="40" fill="#4b5563">latency in ms, log scale · dark bar p50, middle p95, light p99 · c = concurrency</text>`,
  ];
  for (let d = minDecade; d <= maxDecade; d++)
    parts.push(
      `<line x1="${x(10 ** d)}" y1="${top - 4}" x2="${x(10 ** d)}" y2="${y}" stroke="#e5e7eb"/>`,
      `<text x="${x(10 ** d)}" y="${y + 16}" text-anchor="middle" fill="#6b7280">${fmt(10 ** d)}</text>`,
    );
  for (const { s, y: ry } of placed) {
    const fill = color(s.kind, types);
    const bar = (to: number, opacity: number) =>
      `<rect x="${x0}" y="${ry + 3}" width="${Math.max(1, x(to) - x0)}" height="${rowH - 6}" fill="${fill}" fill-opacity="${opacity}"/>`;
    parts.push(
      `<text x="${left - 8}" y="${ry + rowH / 2 + 4}" text-anchor="end" fill="#111827">${esc(`${label(s.kind)}, c=${s.concurrency}`)}</text>`,
      ...[bar(s.latencyMs.p99, 0.25), bar(s.latencyMs.p95, 0.5), bar(s.latencyMs.p50, 1)],
      `<text x="${width - right + 8}" y="${ry + rowH / 2 + 4}" fill="#374151">${fmt(s.latencyMs.p50)} / ${fmt(s.latencyMs.p95)} / ${fmt(s.latencyMs.p99)}</text>`,
    );
  }
  parts.push(
    `<text x="${width - right + 8}" y="${top - 8}" fill="#6b7280">p50 / p95 / p99</text>`,
    `<text x="${left + plotW / 2}" y="${y + 34}" text-anchor="middle" fill="#4b5563">milliseconds (log)</text>`,
    '</svg>',
  );
  return parts.join('\n');
}

/** A run's latency chart, `<name>.svg` in `dir`; none for a run without latency scenarios. */
export function writeChart(
  results: { scenarios: ScenarioResult[]; name: string; mode: string },
  dir: string,
  name: string,
): string {
  if (results.scenarios.length === 0) return '';
  writeFileSync(
    join(dir, `${name}.svg`),
    latencyChartSvg(results.scenarios, `retrysafe benchmark ${results.name} (${results.mode})`),
  );
  return `${name}.svg`;
}
