// What the bench sends and how, as a client of the API would: the operation types (every
// one the registry defines), the request of each naming the bench's own accounts and SKUs,
// and one operation from POST to its terminal outcome.
import { setTimeout as sleep } from 'node:timers/promises';
import { builtInRegistry } from '../../../workflows/registry.js';
import type { OperationDefinition } from '../../../workflows/definition.js';
import type { HttpClient } from '../http.js';
import { mergeResources, resourcesOf, sampleRequest, type Request, type Resources } from './requests.js';

/** One tenant, as retrysafe runs without API keys: the peers' contract says so for every engine. */
export { TENANT } from '../peers/contract.js';

/** The operation types the bench runs, in the registry's order. */
export const DEFINITIONS: readonly OperationDefinition[] = builtInRegistry.all;

export function definitionOf(type: string): OperationDefinition {
  const definition = builtInRegistry.get(type);
  if (!definition) throw new Error(`no operation type ${type} in the registry`);
  return definition;
}

const requests = new Map<string, Request>();

/** The request the bench sends for `type`: always the same, naming the bench's own resources (`bench_account`, ...). */
export function requestFor(type: string): Request {
  let request = requests.get(type);
  if (!request) requests.set(type, (request = sampleRequest(definitionOf(type), 'bench')));
  return request;
}

/** Far beyond what a run uses: no operation of the bench is ever refused for money or stock. */
export const PLENTY = { balance: 1_000_000_000_000, stock: 1_000_000_000 } as const;

/** Opens the accounts and stocks the SKUs `resources` names, with `balance` and `stock` each. */
export async function openResources(
  http: HttpClient,
  urls: { bank: string; reservations: string },
  resources: Resources,
  amounts: { balance: number; stock: number } = PLENTY,
): Promise<void> {
  for (const [id, { currency }] of resources.accounts) {
    const a = await http.json('POST', `${urls.bank}/accounts`, { id, currency, balance: amounts.balance });
    if (a.status !== 201) throw new Error(`POST /accounts ${id} → ${a.status}`);
  }
  for (const sku of resources.skus.keys()) {
    const s = await http.json('PUT', `${urls.reservations}/inventory/${encodeURIComponent(sku)}`, { available: amounts.stock });
    if (s.status >= 300) throw new Error(`PUT /inventory/${sku} → ${s.status}`);
  }
}

/** Opens every account and stocks every SKU the bench's requests name, far beyond what a run uses. */
export async function seedSandboxes(ctx: {
  stack: { urls: { bank: string; reservations: string } };
  http: HttpClient;
}): Promise<void> {
  const all = mergeResources(DEFINITIONS.map((d) => resourcesOf(d, requestFor(d.type))));
  await openResources(ctx.http, ctx.stack.urls, all);
}

/** What the client met on the way to the outcomes of a batch. */
export interface Tally {
  answered202: number;
  retried503: number;
}

export interface Answer {
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
  type: string,
  key: string,
  body: unknown,
  tally?: Tally,
): Promise<Answer> {
  const path = `/v1/${definitionOf(type).plural}`;
  const deadline = Date.now() + 60_000;
  let res;
  for (;;) {
    res = await http.send('POST', apiUrl + path, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    if (res.status !== 503 || Date.now() > deadline) break;
    if (tally) tally.retried503++;
    await sleep(Number(res!.headers['retry-after'] ?? 1) * 1000);
  }
  const replayed = res.headers['idempotent-replayed'] === 'true';
  if (res.status !== 200 && res.status !== 202) throw new Error(`POST ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  if (res.status === 202 && tally) tally.answered202++;
  let operation = JSON.parse(res.text) as Record<string, unknown>;
  while (operation.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
    await sleep(50);
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
