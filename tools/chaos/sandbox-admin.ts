// What the chaos run asks of the sandboxes beside the operations' own calls: the ledger it
// starts from (accounts opened, stock set, from LEDGER) and the faults it injects
// (`PUT /_faults`). Any answer but a 2xx is an error naming the call.
import type { FaultsPatch } from '../../downstream/shared/faults.js';
import { LEDGER } from './vocabulary.js';

async function sandboxJson(url: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const parsed = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** What the run starts from, as the sandboxes said when it set them up: balances by account, stock by SKU. */
export interface InitialLedgers {
  initialBalances: Record<string, number>;
  initialStock: Record<string, number>;
}

/** Opens the run's accounts and sets its stock. */
export async function openLedgers(bankUrl: string, reservationsUrl: string): Promise<InitialLedgers> {
  const initialBalances: Record<string, number> = {};
  for (const a of LEDGER.accounts) {
    const res = await sandboxJson(`${bankUrl}/accounts`, 'POST', { id: a.id, currency: LEDGER.currency, balance: a.balance });
    initialBalances[a.id] = Number(res.balance);
  }
  const initialStock: Record<string, number> = {};
  for (const s of LEDGER.stock) {
    const res = await sandboxJson(`${reservationsUrl}/inventory/${s.sku}`, 'PUT', { available: s.available });
    initialStock[s.sku] = Number(res.available);
  }
  return { initialBalances, initialStock };
}

/** Sets (merges) the injected faults of the sandbox at `baseUrl`. */
export async function putFaults(baseUrl: string, faults: FaultsPatch): Promise<void> {
  await sandboxJson(`${baseUrl}/_faults`, 'PUT', faults);
}
