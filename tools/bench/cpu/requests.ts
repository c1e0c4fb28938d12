// What the CPU bench sends: a request of each built-in type against the accounts and SKU it
// seeds, through a variant's API (POST, then GET until the operation ends), and, for the bare
// baseline, the same keyed calls read off the operation's definition.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_HOLD_TTL_SECONDS } from '../../../client/api/config.js';
import type { OperationDefinition } from '../../../workflows/definition.js';
import { downstreamKey } from '../../../workflows/identity.js';
import type { HttpClient } from '../http.js';
import type { BareCall } from './bare-workflow.js';

/** A request of each built-in type, as a client sends it, against the accounts and SKU seeded below. */
export const ACCOUNT = 'acc_cpu';
export const ACCOUNT_TO = 'acc_cpu_to';
export const SKU = 'sku_cpu';
export const SAMPLE_REQUESTS: Record<string, Record<string, unknown>> = {
  payment: { account: ACCOUNT, amount: 100, currency: 'EUR' },
  checkout: { account: ACCOUNT, amount: 100, currency: 'EUR', items: [{ sku: SKU, quantity: 1 }] },
  transfer: { from: ACCOUNT, to: ACCOUNT_TO, amount: 100, currency: 'EUR' },
};

/**
 * What each hand-written step activity sends (activities/bank.ts, activities/reservations.ts),
 * for the bare baseline; declared calls are read off their definition.
 */
const HAND_WRITTEN_CALLS: Record<string, (input: unknown) => Pick<BareCall, 'method' | 'path' | 'body'>> = {
  reserveItems: (input) => ({ method: 'POST', path: '/reservations', body: input as Record<string, unknown> }),
  chargePayment: (input) => ({ method: 'POST', path: '/charges', body: input as Record<string, unknown> }),
  confirmReservation: () => ({ method: 'POST', path: '/reservations/{key}/confirm', body: {} }),
};

/** The keyed calls an operation's steps make, for the bare workflow to make them the same way. */
export function bareCallsOf(definition: OperationDefinition, request: Record<string, unknown>, workflowId: string): BareCall[] {
  return definition.steps.map((step) => {
    const key = downstreamKey(workflowId, step.keySuffix);
    if (step.call.kind === 'http') {
      return {
        service: step.service,
        key,
        method: step.call.method,
        path: step.call.path,
        body: step.call.body?.(request) ?? {},
      };
    }
    const made = HAND_WRITTEN_CALLS[step.call.activity];
    if (!made) throw new Error(`no bare call for activity ${step.call.activity}`);
    return { service: step.service, key, ...made(step.call.input?.(request, { holdTtlSeconds: DEFAULT_HOLD_TTL_SECONDS })) };
  });
}

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
