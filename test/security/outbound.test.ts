// Outbound calls go only where they were sent, through a real worker and API against a
// scripted bank on loopback. A 307 from the bank is not followed: nothing reaches the
// redirect's target, the charge is retried with the same key until its deadline, then
// fenced and compensated. An answer larger than the bound is not read: the step is fenced at
// once (a declared step here, the transfer's debit). A refusal's detail (an account, a
// balance) stays out of the tenant's error message, which names the code.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHandle } from '../support/api.js';
import { listenOnFreePort } from '../support/loopback.js';
import { startWorker, uniqueId, type WorkerHandle } from '../support/stack.js';

interface Seen {
  method: string | undefined;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const REDIRECTED = 307;
const REFUSED = 402;
const SECRET_FACT = 'account acc_victim holds 12 EUR, overdraft 0';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** Records every request; answers as `answer` says. */
function server(answer: (seen: Seen) => Answer) {
  const seen: Seen[] = [];
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const entry = { method: req.method, path: decodeURIComponent(req.url ?? ''), headers: req.headers, body };
      seen.push(entry);
      const a = answer(entry);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '');
    });
  });
  return { server: s, seen };
}

const target = server(() => ({ status: 201, body: JSON.stringify({ id: 'ch_stolen' }) }));
let targetUrl = '';
/** By amount: 1 redirects, 2 is refused with a detail, a debit answers far past the bound; undos find nothing. */
const bank = server(({ path, body }): Answer => {
  if (path.endsWith('/reverse')) return { status: 200, body: JSON.stringify({ status: 'fenced', chargeId: null, refunded: 0 }) };
  const { amount } = JSON.parse(body || '{}') as { amount?: number };
  if (amount === 1) return { status: REDIRECTED, headers: { location: `${targetUrl}/charges` } };
  if (amount === 2) {
    return {
      status: REFUSED,
      headers: { 'content-type': 'application/problem+json' },
      body: JSON.stringify({ code: 'insufficient_funds', title: `declined: ${SECRET_FACT}`, detail: SECRET_FACT }),
    };
  }
  return { status: 201, body: JSON.stringify({ id: 'ch_big', padding: 'x'.repeat(100 * 1024) }) };
});

let worker: WorkerHandle;
let api: ApiHandle;
const taskQueue = uniqueId('outbound');

beforeAll(async () => {
  targetUrl = await listenOnFreePort(target.server);
  const bankUrl = await listenOnFreePort(bank.server);
  worker = await startWorker({ taskQueue, bankUrl });
  api = await startApi({ taskQueue, stepDeadlineMs: 2_000 });
});
afterAll(async () => {
  await api?.close();
  await worker?.stop();
  for (const s of [target.server, bank.server]) await new Promise((r) => s.close(r));
});

async function run(path: string, body: Record<string, unknown>) {
  const key = uniqueId('out');
  const res = await api.request('POST', path, { body, headers: { 'idempotency-key': key, prefer: 'wait=30' } });
  const final = res.body.status === 'processing' ? await api.waitTerminal(key) : res.body;
  return { key, final };
}

describe('a downstream call', () => {
  it('is not redirected: a 307 is retried with the same key until the deadline, then fenced; nothing reaches the target', async () => {
    const { key, final } = await run('/v1/payments', { account: 'acc_a', amount: 1, currency: 'EUR' });
    expect(final).toMatchObject({
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge'] },
      steps: [{ name: 'charge_payment', status: 'fenced', downstreamKey: `default/${key}/charge` }],
    });
    expect(target.seen).toEqual([]);
    const charges = bank.seen.filter((s) => s.method === 'POST' && s.path === '/charges' && s.body.includes('"amount":1'));
    expect(charges.length).toBeGreaterThanOrEqual(2);
    expect(new Set(charges.map((c) => c.headers['idempotency-key']))).toEqual(new Set([`default/${key}/charge`]));
  });

  it('reads a bounded answer: one past it fences the step at once, unread (a declared step, the debit)', async () => {
    const before = bank.seen.length;
    const { key, final } = await run('/v1/transfers', { from: 'acc_a', to: 'acc_b', amount: 3, currency: 'EUR' });
    expect(final).toMatchObject({
      status: 'failed',
      // The later step is fenced too: a local first attempt lost with its workflow task may have run it.
      error: { code: 'transfer_unavailable', compensations: ['reverse_credit', 'reverse_debit'] },
      steps: [
        { name: 'debit_source', status: 'fenced' },
        { name: 'credit_destination', status: 'fenced' },
      ],
    });
    expect((final.error as { message: string }).message).toContain('larger than 64 KiB');
    expect(JSON.stringify(final)).not.toContain('ch_big');
    // Final at the first attempt: not retried, since the same key gets the same answer.
    const debits = bank.seen.slice(before).filter((s) => s.path === '/charges');
    expect(bank.seen.slice(before).filter((s) => s.path === '/credits')).toEqual([]);
    expect(debits.map((d) => d.headers['idempotency-key'])).toEqual([`default/${key}/debit`]);
  });

  it("keeps a refusal's detail out of the tenant's error: the message names the code", async () => {
    const { final } = await run('/v1/payments', { account: 'acc_a', amount: 2, currency: 'EUR' });
    expect(final).toMatchObject({ status: 'failed', error: { code: 'insufficient_funds', compensations: [] } });
    expect((final.error as { message: string }).message).toBe('bank answered 402 insufficient_funds');
    expect(JSON.stringify(final)).not.toContain('acc_victim');
  });
});
