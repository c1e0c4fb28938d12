// The latency chart: one row per scenario, bars of p99 (light), p95 and p50 (dark) on a
// logarithmic axis (replays take a millisecond, sagas a hundred). Plain SVG, no library;
// rendered to PNG by a headless Chromium when one is installed.
import { existsSync } from 'node:fs';
import type { ScenarioResult } from './scenarios/measure.js';

const COLORS: Record<string, string> = {
  payment: '#2563eb',
  bare1: '#64748b',
  checkout: '#7c3aed',
  bare3: '#475569',
  'payment-direct': '#93c5fd',
  'checkout-direct': '#c4b5fd',
  'bare1-tracked': '#94a3b8',
  'bare3-tracked': '#94a3b8',
  replay: '#059669',
  plain: '#94a3b8',
  'replay-uncached': '#d97706',
  restate: '#0d9488',
  dbos: '#b45309',
  'replay-checkout': '#10b981',
  'replay-restate': '#5eead4',
  'replay-dbos': '#fcd34d',
};

const LABELS: Record<string, string> = {
  payment: 'payment (retrysafe)',
  bare1: 'bare workflow, 1 activity',
  checkout: 'checkout (retrysafe)',
  bare3: 'bare workflow, 3 activities',
  'payment-direct': 'payment workflow, no API',
  'checkout-direct': 'checkout workflow, no API',
  'bare1-tracked': 'bare 1 + bookkeeping',
  'bare3-tracked': 'bare 3 + bookkeeping',
  replay: 'replay (API cache)',
  plain: 'plain Fastify endpoint',
  'replay-uncached': 'replay (no cache)',
  restate: 'checkout on Restate',
  dbos: 'checkout on DBOS Transact',
  'replay-checkout': 'checkout replay (API cache)',
  'replay-restate': 'checkout replay on Restate',
  'replay-dbos': 'checkout replay on DBOS',
};

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
  for (const { s, y: ry } of placed) {
    const color = COLORS[s.kind] ?? '#111827';
    const x0 = x(10 ** minDecade);
    const bar = (to: number, opacity: number) =>
      `<rect x="${x0}" y="${ry + 3}" width="${Math.max(1, x(to) - x0)}" height="${rowH - 6}" fill="${color}" fill-opacity="${opacity}"/>`;
    parts.push(
      `<text x="${left - 8}" y="${ry + rowH / 2 + 4}" text-anchor="end" fill="#111827">${esc(`${LABELS[s.kind] ?? s.kind}, c=${s.concurrency}`)}</text>`,
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

/** Renders the SVG to a PNG with playwright-core and /usr/bin/chromium, or says why not. */
export async function renderPng(svg: string, pngPath: string): Promise<{ ok: true } | { ok: false; reason: string }> {
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
