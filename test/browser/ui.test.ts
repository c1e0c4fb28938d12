// What a person sees, in headless Chromium (Debian's, driven by playwright-core): a
// declined checkout found in the Temporal Web UI by its key and by OperationStatus,
// showing the compensation that ran; and the API docs listing both POST endpoints.
// Screenshots land in test/artifacts/ (git-ignored).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startApi, type ApiHandle } from '../support/api.js';
import {
  startBank,
  startReservations,
  startWorker,
  uniqueId,
  type BankHandle,
  type ReservationsHandle,
  type WorkerHandle,
} from '../support/stack.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
let bank: BankHandle;
let reservations: ReservationsHandle;
let worker: WorkerHandle;
let api: ApiHandle;
let browser: Browser;
const taskQueue = uniqueId('browser');

beforeAll(async () => {
  execFileSync('bash', [fileURLToPath(new URL('../../scripts/ensure-chromium.sh', import.meta.url))], { stdio: 'inherit', timeout: 600_000 });
  mkdirSync(ARTIFACTS, { recursive: true });
  [bank, reservations] = await Promise.all([startBank(), startReservations()]);
  worker = await startWorker({ taskQueue, bankUrl: bank.url, reservationsUrl: reservations.url });
  api = await startApi({ taskQueue, apiKeys: 'browser-secret-0123456789=acme' });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage', '--disable-quic', '--disable-sync', '--disable-software-rasterizer'],
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await worker?.stop();
  await reservations?.close();
  await bank?.close();
});

/**
 * Waits until the rendered page holds the text (HTML and SVG alike: the UI draws its
 * timeline in SVG); on failure keeps a screenshot of what the page showed instead.
 */
async function expectText(on: Page, text: string, shot: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    // The UI renders summaries and details (markdown) inside iframes: read every frame.
    for (const frame of on.frames()) {
      const visible = await frame.locator('body').innerText({ timeout: 1_000 }).catch(() => '');
      if (visible.includes(text) || (await frame.content().catch(() => '')).includes(text)) return;
    }
    await on.waitForTimeout(250);
  }
  await on.screenshot({ path: `${ARTIFACTS}${shot}-FAILED.png`, fullPage: true }).catch(() => undefined);
  throw new Error(`the page at ${on.url()} never showed "${text}" (screenshot: ${shot}-FAILED.png)`);
}

/**
 * Opens the URL in a fresh page and runs the checks. Chromium's renderer on this kind of
 * machine sometimes crashes on the Temporal UI's heavy page (no GPU, software paths):
 * a crashed page is a fact about the browser, not about retrysafe, so it is retried.
 */
async function visit(
  url: string,
  shot: string,
  checks: (on: Page) => Promise<void>,
  headers: Record<string, string> = {},
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const on = await browser.newPage({ viewport: { width: 1440, height: 1000 }, extraHTTPHeaders: headers });
    let crashed = false;
    on.on('crash', () => (crashed = true));
    try {
      await on.goto(url, { waitUntil: 'domcontentloaded' });
      await checks(on);
      return;
    } catch (err) {
      // Playwright may reject with "Page crashed" before the page's crash event is seen.
      crashed ||= /page crashed|target crashed/i.test(String((err as Error).message));
      // The Web UI itself sometimes renders its own transient error page ("Try a refresh").
      const uiError = !crashed && (await on.content().catch(() => '')).includes("Uh oh. There's an error");
      if ((!crashed && !uiError) || attempt >= 5) throw err;
      console.warn(`${shot}: ${crashed ? 'the Chromium page crashed' : 'the Web UI showed its error page'} (attempt ${attempt}); retrying in a new page`);
    } finally {
      await on.close().catch(() => undefined);
    }
  }
}

it('finds a declined checkout in the Temporal UI by key and by OperationStatus, with its compensation', async () => {
  const account = uniqueId('poor');
  const sku = uniqueId('sku');
  await bank.openAccount(account, 100);
  await reservations.setStock(sku, 3);
  const key = uniqueId('order');
  const res = await api.request('POST', '/v1/checkouts', {
    headers: { authorization: 'Bearer browser-secret-0123456789', 'idempotency-key': key, prefer: 'wait=30' },
    body: { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 1 }] },
  });
  expect(res.body).toMatchObject({ status: 'failed', error: { code: 'insufficient_funds', compensations: ['release_reservation'] } });
  const link = (res.body.links as { temporalUi: string }).temporalUi;
  const workflowId = `acme/${key}`;
  expect(link).toBe(`${inject('temporalUiUrl')}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);

  // The operation's own link opens it; the timeline names each activity by its summary,
  // so the compensation that ran is there, and the bank's refusal is in the result.
  await visit(link, 'ui-operation', async (on) => {
    await expectText(on, `release_reservation · reservations key ${workflowId}/reserve`, 'ui-operation');
    await expectText(on, 'insufficient_funds', 'ui-operation');
    await on.screenshot({ path: `${ARTIFACTS}ui-operation.png`, fullPage: true });
    // The static summary set at start and the current details the worker serves.
    await on.getByText('User Metadata', { exact: true }).first().click();
    await expectText(on, `checkout ${workflowId} · EUR 42.00`, 'ui-operation-metadata');
    await expectText(on, 'compensations ran: release_reservation', 'ui-operation-metadata');
    await on.screenshot({ path: `${ARTIFACTS}ui-operation-metadata.png`, fullPage: true });
  });

  // Found by its key (the workflow ID) and by the search attribute an operator filters on.
  const ui = inject('temporalUiUrl');
  for (const [name, query] of [
    ['by-key', `WorkflowId="${workflowId}"`],
    ['by-status', `OperationStatus="failed" AND Tenant="acme"`],
  ] as const) {
    await visit(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`, `ui-search-${name}`, async (on) => {
      await expectText(on, workflowId, `ui-search-${name}`);
      await on.screenshot({ path: `${ARTIFACTS}ui-search-${name}.png`, fullPage: true });
    });
  }
});

it('shows both POST endpoints in the API docs', async () => {
  // With API keys configured, /docs and /openapi.json need one too: a caller's browser
  // sends it like any other client.
  await visit(
    `${api.url}/docs`,
    'api-docs',
    async (docs) => {
      await expectText(docs, '/v1/payments', 'api-docs');
      await expectText(docs, '/v1/checkouts', 'api-docs');
      await docs.screenshot({ path: `${ARTIFACTS}api-docs.png`, fullPage: true });
    },
    { authorization: 'Bearer browser-secret-0123456789' },
  );
});
