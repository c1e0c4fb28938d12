// What an operator sees of a declined checkout in the Temporal Web UI, and the API docs
// listing both POST endpoints. The Web UI's workflow page is not rendered here: Chromium's
// renderer crashes on it on small machines without a GPU. Everything that page shows
// comes from the UI server's own HTTP API (ui-server.ts), so the test reads it there: the
// operation found by its key and by OperationStatus, its timeline naming the compensation
// that ran, its result, its static summary and its current details. The workflow list
// renders reliably, in headless Chromium (Debian's, driven by playwright-core): one
// screenshot of it, filtered as an operator would. Screenshots land in test/artifacts/
// (git-ignored).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { uiServer } from './ui-server.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const AUTH = 'Bearer browser-secret-0123456789';
// Tenant links into the Web UI are off by default with API keys; this operator turns them on.
const stack = useFullStack({
  name: 'browser',
  apiKeys: 'browser-secret-0123456789=acme',
  env: { RETRYSAFE_UI_LINKS: 'on' },
});
let browser: Browser;

beforeAll(async () => {
  execFileSync('bash', [fileURLToPath(new URL('../support/ensure-chromium.sh', import.meta.url))], {
    stdio: 'inherit',
    timeout: 600_000,
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--disable-sync',
      '--disable-software-rasterizer',
    ],
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
});

/** Visibility is eventually consistent: polls `list` until it holds `workflowId`. */
async function listed(query: string, workflowId: string): Promise<string[]> {
  const ui = uiServer(inject('temporalUiUrl'));
  let ids: string[] = [];
  for (let i = 0; i < 60 && !ids.includes(workflowId); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 500));
    ids = await ui.list(query);
  }
  return ids;
}

/** Opens `url` in a fresh page; the page's text must come to hold every one of `texts`. */
async function render(url: string, texts: string[], shot: string, headers: Record<string, string> = {}): Promise<void> {
  const page: Page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, extraHTTPHeaders: headers });
  try {
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    for (const text of texts) await page.getByText(text).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: `${ARTIFACTS}${shot}.png`, fullPage: true });
  } catch (err) {
    await page.screenshot({ path: `${ARTIFACTS}${shot}-FAILED.png`, fullPage: true }).catch(() => undefined);
    throw err;
  } finally {
    await page.close().catch(() => undefined);
  }
}

it('finds a declined checkout in the Temporal UI by key and by OperationStatus, with its compensation', async () => {
  const account = uniqueId('poor');
  const sku = uniqueId('sku');
  await stack.bank.openAccount(account, 100);
  await stack.reservations.setStock(sku, 3);
  const key = uniqueId('order');
  const res = await stack.api.request('POST', '/v1/checkouts', {
    headers: { authorization: AUTH, 'idempotency-key': key, prefer: 'wait=30' },
    body: { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 1 }] },
  });
  expect(res.body).toMatchObject({
    status: 'failed',
    error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
  });
  const ui = inject('temporalUiUrl');
  const workflowId = `acme/${key}`;
  // The operation's own link opens it in the Web UI.
  const link = (res.body.links as { temporalUi: string }).temporalUi;
  expect(link).toBe(`${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
  expect((await fetch(link)).status).toBe(200);

  // What its workflow page shows: the static summary set at start, the timeline naming each
  // activity by its summary (so the compensation that ran is there), the bank's refusal in
  // the result, and the current details the worker serves (the User Metadata tab).
  const server = uiServer(ui);
  const described = await server.describe(workflowId);
  expect(described).toMatchObject({
    status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED',
    summary: `checkout \`${workflowId}\` · EUR 42.00`,
  });
  expect(described.details).toContain(account);
  const history = await server.history(workflowId);
  expect(history.activitySummaries).toEqual([
    `reserve_items · reservations key \`${workflowId}/reserve\``,
    `charge_payment · bank key \`${workflowId}/charge\``,
    `release_reservation · reservations key \`${workflowId}/reserve\``,
  ]);
  expect(history.result).toMatchObject({
    status: 'failed',
    error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
  });
  const metadata = (await server.query(workflowId, '__temporal_workflow_metadata')) as { currentDetails?: string };
  expect(metadata.currentDetails).toContain('compensations ran: release_reservation');

  // Found by its key (the workflow ID) and by the search attributes an operator filters on.
  expect(await listed(`WorkflowId="${workflowId}"`, workflowId)).toEqual([workflowId]);
  const byStatus = `OperationStatus="failed" AND Tenant="acme"`;
  expect(await listed(byStatus, workflowId)).toContain(workflowId);
  expect(await server.list(`OperationStatus="succeeded" AND Tenant="acme"`)).not.toContain(workflowId);
  // The list page, as an operator sees it with that filter.
  await render(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(byStatus)}`, [workflowId], 'ui-search-by-status');
});

it('shows both POST endpoints in the API docs', async () => {
  // With API keys configured, /docs and /openapi.json need one too: a caller's browser
  // sends it like any other client.
  await render(`${stack.api.url}/docs`, ['/v1/payments', '/v1/checkouts'], 'api-docs', { authorization: AUTH });
});
