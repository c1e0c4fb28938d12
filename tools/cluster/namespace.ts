// The namespace the project uses, on a cluster that starts with none: the dev server
// creates `default` by itself, a real server does not. Registered once, then prepared
// exactly as every other Temporal the project runs on (search attributes, retention).
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import {
  retentionDuration,
  setupNamespace,
  waitForSearchAttributes,
  type NamespaceSetupResult,
} from '../../common/namespace-setup.js';

export interface EnsureNamespaceResult extends NamespaceSetupResult {
  registered: boolean;
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 5 || /not found/i.test(String((err as Error).message));
}

export async function ensureNamespace(address: string, namespace: string, retentionMs: number): Promise<EnsureNamespaceResult> {
  const connection = await Connection.connect({ address, connectTimeout: 10_000 });
  try {
    let registered = false;
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: retentionDuration(retentionMs),
        });
        registered = true;
      } catch (e) {
        // Another set-up registered it between our describe and register.
        if (!/already exists|already registered/i.test(String((e as Error).message))) throw e;
      }
    }
    // A new namespace reaches every service's namespace cache within its refresh interval
    // (2 s by default); until then the operator API answers "not found".
    const result = await retryWhileNotFound(() => setupNamespace(connection, namespace, { retentionMs }));
    await waitForSearchAttributes(connection, namespace);
    return { ...result, registered };
  } finally {
    await connection.close();
  }
}

async function retryWhileNotFound<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isNotFound(err) || Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}
