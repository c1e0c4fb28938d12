// What the bench sends and how, as a client of the API would: the bench's account and SKU,
// the request bodies, and one operation from POST to its terminal outcome.
import type { HttpClient } from '../http.js';
import type { Stack } from '../stack.js';

export const ACCOUNT = 'acc_bench';
export const SKU = 'sku_bench';
export const AMOUNT = 100;
export const TENANT = 'default';

export function paymentBody(account = ACCOUNT) {
  return { account, amount: AMOUNT, currency: 'EUR' };
}

export function checkoutBody(account = ACCOUNT, sku = SKU) {
  return { account, amount: AMOUNT, currency: 'EUR', items: [{ sku, quantity: 1 }] };
}

/** Opens the bench account and stocks the bench SKU, far beyond what a run uses. */
export async function seedSandboxes(ctx: { stack: Stack; http: HttpClient }): Promise<void> {
  const { bank, reservations } = ctx.stack.urls;
  const a = await ctx.http.json('POST', `${bank}/accounts`, { id: ACCOUNT, currency: 'EUR', balance: 1_000_000_000_000 });
  if (a.status !== 201) throw new Error(`POST /accounts → ${a.status}`);
  const s = await ctx.http.json('PUT', `${reservations}/inventory/${SKU}`, { available: 1_000_000_000 });
  if (s.status >= 300) throw new Error(`PUT /inventory → ${s.status}`);
}

/** What the client met on the way to the outcomes of a batch. */
export interface Tally {
  answered202: number;
  retried503: number;
}

interface Answer {
  status: number;
  replayed: boolean;
  operation: Record<string, unknown>;
}

/**
 * What a client does: POST; on 503 engine_unavailable retry the same request after
 * Retry-After (the key makes that safe); on 202 GET the operation until it is terminal.
 */
export async function submit(
  http: HttpClient,
  apiUrl: string,
  type: 'payment' | 'checkout',
  key: string,
  body: unknown,
  tally?: Tally,
): Promise<Answer> {
  const path = type === 'payment' ? '/v1/payments' : '/v1/checkouts';
  const deadline = Date.now() + 60_000;
  let res;
  for (;;) {
    res = await http.send('POST', apiUrl + path, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    if (res.status !== 503 || Date.now() > deadline) break;
    if (tally) tally.retried503++;
    await new Promise((r) => setTimeout(r, Number(res!.headers['retry-after'] ?? 1) * 1000));
  }
  const replayed = res.headers['idempotent-replayed'] === 'true';
  if (res.status !== 200 && res.status !== 202) throw new Error(`POST ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  if (res.status === 202 && tally) tally.answered202++;
  let operation = JSON.parse(res.text) as Record<string, unknown>;
  while (operation.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
    await new Promise((r) => setTimeout(r, 50));
    const poll = await http.send('GET', `${apiUrl}/v1/operations/${encodeURIComponent(key)}`);
    if (poll.status !== 200) throw new Error(`GET operation → ${poll.status}`);
    operation = JSON.parse(poll.text) as Record<string, unknown>;
  }
  return { status: res.status, replayed, operation };
}

/** A peer's answer: the outcome of its checkout (a subset of retrysafe's operation resource). */
export interface PeerOutcome {
  status?: string;
  result?: { chargeId?: string; reservationId?: string };
  error?: { code?: string; compensations?: string[] };
}

/** POST a checkout to a peer; it answers 200 with the outcome once the checkout has ended. */
export async function submitToPeer(http: HttpClient, url: string, key: string, body: unknown): Promise<PeerOutcome> {
  const res = await http.send('POST', url, {
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`POST ${url} (${key}) → ${res.status} ${res.text.slice(0, 200)}`);
  return JSON.parse(res.text) as PeerOutcome;
}
