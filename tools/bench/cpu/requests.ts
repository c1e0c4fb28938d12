// What the CPU bench sends: a request of each built-in type against the accounts and SKU it
// seeds, through a variant's API (POST, then GET until the operation ends).
import { setTimeout as sleep } from 'node:timers/promises';
import type { OperationDefinition } from '../../../workflows/definition.js';
import type { HttpClient } from '../http.js';

/** A request of each built-in type, as a client sends it, against the accounts and SKU seeded below. */
export const ACCOUNT = 'acc_cpu';
export const ACCOUNT_TO = 'acc_cpu_to';
export const SKU = 'sku_cpu';
export const SAMPLE_REQUESTS: Record<string, Record<string, unknown>> = {
  payment: { account: ACCOUNT, amount: 100, currency: 'EUR' },
  checkout: { account: ACCOUNT, amount: 100, currency: 'EUR', items: [{ sku: SKU, quantity: 1 }] },
  transfer: { from: ACCOUNT, to: ACCOUNT_TO, amount: 100, currency: 'EUR' },
};

/** POST the operation (with a wait); on 202 GET it until it ends. It must succeed. */
export async function throughApi(http: HttpClient, apiUrl: string, definition: OperationDefinition, key: string): Promise<void> {
  const res = await http.send('POST', `${apiUrl}/v1/${definition.plural}`, {
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(SAMPLE_REQUESTS[definition.type]),
  });
  if (res.status !== 200 && res.status !== 202)
    throw new Error(`POST ${definition.plural} → ${res.status} ${res.text.slice(0, 200)}`);
  let operation = JSON.parse(res.text) as { status: string; error?: unknown };
  const deadline = Date.now() + 60_000;
  while (operation.status === 'processing') {
    if (Date.now() > deadline) throw new Error(`${key} still processing after 60 s`);
    await sleep(50);
    const poll = await http.send('GET', `${apiUrl}/v1/operations/${encodeURIComponent(key)}`);
    operation = JSON.parse(poll.text) as typeof operation;
  }
  if (operation.status !== 'succeeded') throw new Error(`${key} ${operation.status}: ${JSON.stringify(operation.error)}`);
}
