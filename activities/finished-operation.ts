// The finished operation a completion event carries: read from Temporal and built by the
// API's own resource mapping, so the event's `data` is what a GET of the key answers (the
// notification itself aside: the event is the notification).
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { toOperation } from '../common/resource.js';
import type { Operation } from '../common/resource-schema.js';
import { describeRetention, type RetentionCache } from '../common/retention.js';
import type { NotificationInput } from '../workflows/contracts.js';

/** The operation of `input`, or undefined while its workflow still runs. */
export async function readFinishedOperation(
  client: Client,
  namespace: string,
  retention: RetentionCache,
  input: NotificationInput,
): Promise<Operation | undefined> {
  const handle = client.workflow.getHandle(input.operation.workflowId);
  const description = await handle.describe();
  if (description.status.name === 'RUNNING' || description.status.name === 'PAUSED') return undefined;
  let outcome: unknown;
  if (description.status.name === 'COMPLETED') {
    try {
      outcome = await handle.result();
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
    }
  }
  const retentionMs = await retention.get(() => describeRetention(client, namespace));
  return toOperation(description, outcome, { temporalUiUrl: input.temporalUiUrl, namespace, retentionMs });
}
