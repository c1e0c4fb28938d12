// What the bench sends and how, as a client of the API would, for every operation type the
// registry defines (no type is named here: one added to the registry joins the bench): a
// request built from the type's own schema (free strings named after the bench's resources),
// the sandbox resources that request names (read off what the type's steps send downstream:
// a bank movement's `account`, a hold's `sku`), one operation from POST to its terminal
// outcome, and the names of the workflows each type is measured against.
import { setTimeout as sleep } from 'node:timers/promises';
import { Value } from 'typebox/value';
import { defaultSettings, type OperationDefinition } from '../../workflows/definition.js';
import { fieldsOf } from '../../workflows/program.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import type { HttpClient, Tally } from './load.js';

/** One tenant, as retrysafe runs without API keys: the peers' contract says so for every engine. */
export { TENANT } from './peers/contract.js';

/** The operation types the bench runs, in the registry's order. */
export const DEFINITIONS: readonly OperationDefinition[] = builtInCatalog.all;

export function definitionOf(type: string): OperationDefinition {
  const definition = builtInCatalog.get(type);
  if (!definition) throw new Error(`no operation type ${type} in the registry`);
  return definition;
}

export type Request = Record<string, unknown>;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  enum?: unknown[];
  examples?: unknown[];
  minimum?: number;
}

/** One value of `schema`: an example or the smallest value it allows; a free string reads `<prefix>_<field path>`. */
function sample(schema: Schema, path: string[]): unknown {
  switch (schema.type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((f) => [f, sample(schema.properties![f]!, [...path, f])]));
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sample(schema.items!, path));
    case 'integer':
    case 'number':
      return typeof schema.examples?.[0] === 'number' ? schema.examples[0] : (schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      if (schema.enum) return schema.examples?.find((e) => schema.enum!.includes(e)) ?? schema.enum[0];
      return path.join('_');
    default:
      throw new Error(`no sample for a schema of type ${String(schema.type)} at ${path.slice(1).join('.') || 'the top'}`);
  }
}

/** A valid request of `definition` whose distinct fields name distinct resources (`bench_from` is not `bench_to`). */
export function sampleRequest(definition: OperationDefinition, prefix: string): Request {
  const request = sample(definition.request as Schema, [prefix]) as Request;
  const problems = [
    ...[...Value.Errors(definition.request, request)].map((e) => e.message),
    ...(definition.check?.(request as never) ?? []).map((p) => `${p.field} ${p.message}`),
  ];
  if (problems.length > 0)
    throw new Error(`the bench cannot build a valid ${definition.type} request from its schema: ${problems.join('; ')}`);
  return request;
}

const requests = new Map<string, Request>();

/** The request the bench sends for `type`: always the same, naming the bench's own resources (`bench_account`, ...). */
export function requestFor(type: string): Request {
  if (!requests.has(type)) requests.set(type, sampleRequest(definitionOf(type), 'bench'));
  return requests.get(type)!;
}

/** The bank accounts (with what one movement takes or gives) and the SKUs (with the quantity held) a request names. */
export interface Resources {
  accounts: Map<string, { amount: number; currency: string }>;
  skus: Map<string, number>;
}

function collect(value: unknown, into: Resources): void {
  if (typeof value !== 'object' || value === null) return;
  const v = value as Record<string, unknown>;
  if (typeof v.account === 'string' && typeof v.amount === 'number' && typeof v.currency === 'string')
    into.accounts.set(v.account, { amount: v.amount, currency: v.currency });
  if (typeof v.sku === 'string' && typeof v.quantity === 'number') into.skus.set(v.sku, (into.skus.get(v.sku) ?? 0) + v.quantity);
  for (const child of Array.isArray(value) ? value : Object.values(v)) collect(child, into);
}

/** The resources `request` names, as its forward steps send them (a step's declared body or its activity's input). */
export function resourcesOf(definition: OperationDefinition, request: Request, into?: Resources): Resources {
  const out = into ?? { accounts: new Map(), skus: new Map() };
  const settings = defaultSettings(definition);
  for (const { call } of definition.steps) {
    const map = call.kind === 'http' ? call.body : call.input;
    if (map) collect(fieldsOf(map, request, settings), out);
  }
  return out;
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

/** Opens every account and stocks every SKU the bench's requests name. */
export async function seedSandboxes(http: HttpClient, urls: { bank: string; reservations: string }): Promise<void> {
  const all: Resources = { accounts: new Map(), skus: new Map() };
  for (const d of DEFINITIONS) resourcesOf(d, requestFor(d.type), all);
  await openResources(http, urls, all);
}

export interface Answer {
  status: number;
  replayed: boolean;
  operation: Record<string, unknown>;
}

/**
 * What a client does: POST; on 503 or 429 (a tenant over its share, or more duplicates of
 * one key waiting than an instance lets wait) retry the same request after Retry-After (the
 * key makes that safe); on 202 GET the operation until it is terminal.
 */
export async function submit(http: HttpClient, apiUrl: string, type: string, key: string, body: unknown, tally?: Tally) {
  const path = `/v1/${definitionOf(type).plural}`;
  const deadline = Date.now() + 60_000;
  const post = () =>
    http.send('POST', apiUrl + path, {
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
  let res = await post();
  while ((res.status === 503 || res.status === 429) && Date.now() <= deadline) {
    if (tally) tally.retried503++;
    await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
    res = await post();
  }
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
  return { status: res.status, replayed: res.headers['idempotent-replayed'] === 'true', operation } satisfies Answer;
}

/** A peer's answer: the outcome of its checkout (a subset of retrysafe's operation resource). */
export async function submitToPeer(http: HttpClient, url: string, key: string, body: unknown) {
  const res = await http.send('POST', url, {
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`POST ${url} (${key}) → ${res.status} ${res.text.slice(0, 200)}`);
  return JSON.parse(res.text) as { status?: string; result?: { chargeId?: string } };
}

/** The scenario kinds one operation type is measured as and against, named after it or its number of steps. */
export interface OperationKinds {
  /** The operation through the API. */
  own: string;
  /** Bare Temporal with as many no-op activities as it has steps (`bare3`): the engine's floor. */
  bare: string;
  activities: number;
  /** That bare workflow plus exactly retrysafe's bookkeeping (`bare3-tracked`). */
  tracked: string;
  /** retrysafe's workflow started by a Temporal client, without the API (`checkout-direct`). */
  direct: string;
  /** Bare Temporal making the operation's own keyed HTTP calls, nothing else (`bare-http-checkout`): the same work. */
  fair?: string;
}

export function operationKinds(definition: Pick<OperationDefinition, 'type' | 'steps'>): OperationKinds {
  const n = definition.steps.length;
  const t = definition.type;
  return { own: t, bare: `bare${n}`, activities: n, tracked: `bare${n}-tracked`, direct: `${t}-direct`, fair: `bare-http-${t}` };
}
