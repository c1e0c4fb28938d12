// The latency chart: one row per scenario, bars of p99 (light), p95 and p50 (dark) on a
// logarithmic axis (replays take a millisecond, sagas a hundred). Plain SVG, no library;
// rendered to PNG by a headless Chromium when one is installed.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResults } from './results.js';
import type { ScenarioResult } from './scenarios/measure.js';

/** The kinds not named after an operation type. */
const FIXED: Record<string, { color: string; label: string }> = {
  replay: { color: '#059669', label: 'replay (API cache)' },
  plain: { color: '#94a3b8', label: 'plain Fastify endpoint' },
  'replay-uncached': { color: '#d97706', label: 'replay (no cache)' },
  restate: { color: '#0d9488', label: 'checkout on Restate' },
  dbos: { color: '#b45309', label: 'checkout on DBOS Transact' },
  'replay-restate': { color: '#5eead4', label: 'checkout replay on Restate' },
  'replay-dbos': { color: '#fcd34d', label: 'checkout replay on DBOS' },
};

/** One color per operation type, in the order the chart meets them, and a lighter one for its variants. */
const OPERATION_COLORS = [
  ['#2563eb', '#93c5fd'],
  ['#7c3aed', '#c4b5fd'],
  ['#db2777', '#f9a8d4'],
  ['#ca8a04', '#fde047'],
];

/** A scenario kind's bar color and label (tools/bench/scenarios/kinds.ts names the kinds). */
function style(kind: string, types: string[]): { color: string; label: string } {
  if (Object.hasOwn(FIXED, kind)) return FIXED[kind]!;
  const typeColors = (type: string) => {
    if (!types.includes(type)) types.push(type);
    return OPERATION_COLORS[types.indexOf(type) % OPERATION_COLORS.length]!;
  };
  let m = /^bare(\d+)$/.exec(kind);
  if (m) return { color: '#475569', label: `bare workflow, ${m[1]} activit${m[1] === '1' ? 'y' : 'ies'}` };
  m = /^bare(\d+)-tracked$/.exec(kind);
  if (m) return { color: '#94a3b8', label: `bare ${m[1]} + bookkeeping` };
  m = /^bare-http-(.+)$/.exec(kind);
  if (m) return { color: '#0891b2', label: `bare + ${m[1]}'s HTTP calls` };
  m = /^(.+)-direct$/.exec(kind);
  if (m) return { color: typeColors(m[1]!)[1]!, label: `${m[1]} workflow, no API` };
  m = /^replay-(.+)$/.exec(kind);
  if (m) return { color: '#10b981', label: `${m[1]} replay (API cache)` };
  return { color: typeColors(kind)[0]!, label: `${kind} (retrysafe)` };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (ms: number) =>
  ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 0.01 || ms === 0 ? ms.toFixed(2) : String(+ms.toPrecision(1));

export function latencyChartSvg(scenarios: ScenarioResult[], title: string): string {
  const rows = scenarios.filter((s) => s.latencyMs.n > 0);
  const width = 1000;
  const left = 250;
  const right = 250;
  const top = 56;
  const rowH = 20;
  const gap = 10;
  // A gap between groups (new operations per concurrency, then replays).
  const groupOf = (s: ScenarioResult) => `${['replay', 'plain', 'replay-uncached'].includes(s.kind) ? 'r' : 'n'}${s.concurrency}`;
  let y = top;
  const placed: Array<{ s: ScenarioResult; y: number }> = [];
  let lastGroup = '';
  for (const s of rows) {
    if (lastGroup && groupOf(s) !== lastGroup) y += gap;
    lastGroup = groupOf(s);
    placed.push({ s, y });
    y += rowH;
  }
  const height = y + 48;
  const lo = Math.min(...rows.map((s) => s.latencyMs.p50));
  const hi = Math.max(...rows.map((s) => s.latencyMs.p99));
  const minDecade = Math.floor(Math.log10(Math.max(lo, 0.01) / 1.2));
  const maxDecade = Math.ceil(Math.log10(Math.max(hi, 0.02) * 1.2));
  const plotW = width - left - right;
  const x = (ms: number) => left + ((Math.log10(Math.max(ms, 10 ** minDecade)) - minDecade) / (maxDecade - minDecade)) * plotW;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(title)}</text>`,
    `<text x="${left}" y="40" fill="#4b5563">latency in ms, log scale · dark bar p50, middle p95, light p99 · c = concurrency</text>`,
  );
  for (let d = minDecade; d <= maxDecade; d++) {
    const gx = x(10 ** d);
    parts.push(
      `<line x1="${gx}" y1="${top - 4}" x2="${gx}" y2="${y}" stroke="#e5e7eb"/>`,
      `<text x="${gx}" y="${y + 16}" text-anchor="middle" fill="#6b7280">${fmt(10 ** d)}</text>`,
    );
  }
  const types: string[] = [];
  for (const { s, y: ry } of placed) {
    const { color, label } = style(s.kind, types);
    const x0 = x(10 ** minDecade);
    const bar = (to: number, opacity: number) =>
      `<rect x="${x0}" y="${ry + 3}" width="${Math.max(1, x(to) - x0)}" height="${rowH - 6}" fill="${color}" fill-opacity="${opacity}"/>`;
    parts.push(
      `<text x="${left - 8}" y="${ry + rowH / 2 + 4}" text-anchor="end" fill="#111827">${esc(`${label}, c=${s.concurrency}`)}</text>`,
      bar(s.latencyMs.p99, 0.25),
      bar(s.latencyMs.p95, 0.5),
      bar(s.latencyMs.p50, 1),
      `<text x="${width - right + 8}" y="${ry + rowH / 2 + 4}" fill="#374151">${fmt(s.latencyMs.p50)} / ${fmt(s.latencyMs.p95)} / ${fmt(s.latencyMs.p99)}</text>`,
    );
  }
  parts.push(`<text x="${width - right + 8}" y="${top - 8}" fill="#6b7280">p50 / p95 / p99</text>`);
  parts.push(`<text x="${left + plotW / 2}" y="${y + 34}" text-anchor="middle" fill="#4b5563">milliseconds (log)</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

export const CHROMIUM = '/usr/bin/chromium';

export type PngResult = { ok: true } | { ok: false; reason: string };

/** Renders the SVG to a PNG with playwright-core and /usr/bin/chromium, or says why not. */
export async function renderPng(svg: string, pngPath: string): Promise<PngResult> {
  if (!existsSync(CHROMIUM)) return { ok: false, reason: `${CHROMIUM} is not installed` };
  let chromium: typeof import('playwright-core').chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    return { ok: false, reason: 'playwright-core is not installed' };
  }
  const size = /width="(\d+)" height="(\d+)"/.exec(svg);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: Number(size?.[1] ?? 1000), height: Number(size?.[2] ?? 600) } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: pngPath });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `chromium failed: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    await browser.close();
  }
}

/**
 * A run's latency chart, `<name>.svg` in `dir`, and its PNG when Chromium renders it. A run
 * of the overload section alone has no latency scenarios, so no chart.
 */
export async function writeChart(
  results: Pick<BenchResults, 'scenarios' | 'name' | 'mode'>,
  dir: string,
  name: string,
): Promise<PngResult> {
  if (results.scenarios.length === 0) return { ok: false, reason: 'no latency scenarios in this run' };
  const svg = latencyChartSvg(results.scenarios, `retrysafe benchmark ${results.name} (${results.mode})`);
  writeFileSync(join(dir, `${name}.svg`), svg);
  return renderPng(svg, join(dir, `${name}.png`));
}
