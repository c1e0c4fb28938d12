// Takes the screenshots of docs/operating.md: the trace of a checkout and the trace of one
// the bank refused for insufficient funds (its reservation released by the compensation),
// as Zipkin's UI shows them, in Debian's Chromium without a display. Run it against a stack
// started with `npm start -- --traces`:
//
//   npx tsx tools/trace-screenshots.ts [--api URL] [--bank URL] [--zipkin URL] [--out DIR]
//
// It makes the two checkouts through the API (a fresh key each time), waits until Zipkin
// holds their spans from every part, and writes trace-checkout.png and trace-compensated.png.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const PARTS = ['retrysafe-api', 'retrysafe-bank', 'retrysafe-reservations', 'retrysafe-worker'];

interface Options {
  api: string;
  bank: string;
  zipkin: string;
  out: string;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      api: { type: 'string', default: 'http://127.0.0.1:3000' },
      bank: { type: 'string', default: 'http://127.0.0.1:4001' },
      zipkin: { type: 'string', default: 'http://127.0.0.1:9411' },
      out: { type: 'string', default: join(ROOT, 'docs', 'images') },
    },
    strict: true,
    allowPositionals: false,
  });
  return values as Options;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(40_000),
  });
  const answer = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300 && res.status !== 409) throw new Error(`POST ${url} → ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** A checkout through the API, waited for; returns its trace ID. */
async function checkout(
  opts: Options,
  key: string,
  account: string,
  amount: number,
): Promise<{ traceId: string; status: unknown }> {
  const operation = await post(
    `${opts.api}/v1/checkouts`,
    { account, amount, currency: 'EUR', description: 'two books', items: [{ sku: 'sku_book', quantity: 2 }] },
    { 'idempotency-key': key, prefer: 'wait=30' },
  );
  if (typeof operation.traceId !== 'string')
    throw new Error(`the API answered no traceId: is it traced? ${JSON.stringify(operation)}`);
  return { traceId: operation.traceId, status: operation.status };
}

/** Waits until Zipkin holds spans of `traceId` from every part, and the span `name` among them. */
async function waitForTrace(opts: Options, traceId: string, name: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${opts.zipkin}/api/v2/trace/${traceId}`);
    if (res.ok) {
      const spans = (await res.json()) as Array<{ name: string; localEndpoint?: { serviceName?: string } }>;
      const services = new Set(spans.map((s) => s.localEndpoint?.serviceName));
      if (PARTS.every((p) => services.has(p)) && spans.some((s) => s.name === name)) return;
    }
    await sleep(300);
  }
  throw new Error(`Zipkin at ${opts.zipkin} has no complete trace ${traceId}`);
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  execFileSync('bash', [join(ROOT, 'tools', 'ensure-chromium.sh')], { stdio: 'inherit' });
  mkdirSync(opts.out, { recursive: true });
  const stamp = Date.now().toString(36);

  const done = await checkout(opts, `screenshot-${stamp}`, 'acc_alice', 4200);
  const poor = `acc_screenshot_${stamp}`;
  await post(`${opts.bank}/accounts`, { id: poor, balance: 1000, currency: 'EUR' });
  const refused = await checkout(opts, `screenshot-${stamp}-refused`, poor, 4200);
  console.log(`checkout ${done.traceId} ${String(done.status)}; refused checkout ${refused.traceId} ${String(refused.status)}`);
  await waitForTrace(opts, done.traceId, 'confirm_reservation');
  await waitForTrace(opts, refused.traceId, 'release_reservation');

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    // Each with one span selected, so the panel beside the timeline shows its attributes.
    for (const [traceId, selected, file] of [
      [done.traceId, 'charge_payment', 'trace-checkout.png'],
      [refused.traceId, 'release_reservation', 'trace-compensated.png'],
    ] as const) {
      await page.goto(`${opts.zipkin}/zipkin/traces/${traceId}`, { waitUntil: 'networkidle' });
      // The timeline is drawn once the trace is fetched: every part's name is on it.
      for (const part of PARTS) await page.getByText(part, { exact: false }).first().waitFor({ timeout: 30_000 });
      await page.getByText(`retrysafe-worker: ${selected}`).first().click();
      await page.getByText('retrysafe.outcome').first().waitFor({ timeout: 10_000 });
      await page.screenshot({ path: join(opts.out, file), fullPage: true });
      console.log(`wrote ${join(opts.out, file)}`);
    }
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
