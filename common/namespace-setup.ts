// Prepares a namespace for retrysafe through the operator API, idempotently: registers the
// search attributes the workflows write (status reads and the Web UI's filters need them)
// and sets the retention window, which is how long an idempotency key is remembered after
// its operation ends.
// (The dev server's --search-attribute flag only applies to a new database file.)
import Long from 'long';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SearchAttributes } from '../workflows/contracts.js';

const { IndexedValueType } = proto.temporal.api.enums.v1;
type IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

const INDEXED_TYPE: Record<string, IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
};

export interface NamespaceSetupResult {
  added: string[];
  retentionSeconds: number;
}

export async function setupNamespace(
  connection: Connection,
  namespace: string,
  opts: { retentionMs: number },
): Promise<NamespaceSetupResult> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing: Record<string, IndexedValueType> = {};
  for (const key of Object.values(SearchAttributes)) {
    if (!known.has(key.name)) missing[key.name] = INDEXED_TYPE[key.type]!;
  }
  if (Object.keys(missing).length > 0) {
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    } catch (err) {
      // Another launcher may have added them between our list and add.
      if (!/already exists/i.test(String((err as Error).message))) throw err;
    }
  }
  const retention = retentionDuration(opts.retentionMs);
  await connection.workflowService.updateNamespace({ namespace, config: { workflowExecutionRetentionTtl: retention } });
  return { added: Object.keys(missing), retentionSeconds: retention.seconds.toNumber() };
}

/** A retention window as the protobuf Duration the namespace APIs take, in whole seconds. */
export function retentionDuration(retentionMs: number): { seconds: Long } {
  return { seconds: Long.fromNumber(Math.round(retentionMs / 1000)) };
}

/** Waits until the namespace's visibility store reports every retrysafe search attribute. */
export async function waitForSearchAttributes(connection: Connection, namespace: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(res.customAttributes ?? {}));
    if (Object.values(SearchAttributes).every((k) => known.has(k.name))) return;
    if (Date.now() > deadline) throw new Error('search attributes did not become visible in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}
