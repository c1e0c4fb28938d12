// Completion webhooks on the Standard Webhooks spec (standardwebhooks.com), through its
// reference library. The event body is made once (prepareCompletionEvent, kept in the
// notification workflow's history) and POSTed byte for byte on every attempt; each attempt
// carries a fresh `webhook-timestamp` and the signature over `<id>.<timestamp>.<body>`, so
// a redelivery hours later is not refused as a replay by the receiver's tolerance window.
// Each tenant's events are signed with that tenant's own secrets, every current one while it
// rotates (the signatures space-separated, as the spec allows), so a receiver holding either
// the old or the new secret verifies them. Secrets come from the worker's config and never
// enter history. A POST never follows a redirect: the event goes to the tenant's URL or
// nowhere.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import type { CompletionEvent, NotificationInput } from '../workflows/contracts.js';
import { completionEventId, type OperationRef } from '../workflows/identity.js';
import { readFinishedOperation } from './finished-operation.js';
import { RetentionCache } from '../common/retention.js';

export interface WebhookDeps {
  /** Each tenant's receiving URL, read at every attempt: a changed URL applies to redeliveries. */
  urls: ReadonlyMap<string, string>;
  /** Each tenant's `whsec_…` signing secrets; every one signs each event of that tenant. */
  secrets: ReadonlyMap<string, readonly string[]>;
  /** Timeout of one POST (below the activity's start-to-close). */
  timeoutMs: number;
}

/** Bounded label values of `retrysafe_webhook_deliveries`. */
export type DeliveryResult = 'delivered' | 'rejected' | 'timeout' | 'unreachable' | 'unconfigured';

/** What every attempt's failure carries, so the workflow can report the attempts made. */
function notDelivered(message: string, attempt: number): ApplicationFailure {
  return ApplicationFailure.retryable(message, 'WebhookNotDelivered', { attempt });
}

/** The event of a finished operation: its resource as the API answers it. */
async function completionEvent(input: NotificationInput, retention: RetentionCache): Promise<CompletionEvent> {
  const ctx = Context.current();
  const namespace = ctx.info.workflowNamespace ?? ctx.client.options.namespace;
  const operation = await readFinishedOperation(ctx.client, namespace, retention, input);
  if (!operation) throw ApplicationFailure.retryable(`${input.operation.workflowId} is still running`, 'OperationRunning');
  // The event is the notification: its state would only ever read "pending" here.
  const { notification: _notification, ...data } = operation;
  const event = {
    type: data.status === 'succeeded' ? 'operation.succeeded' : 'operation.failed',
    timestamp: data.completedAt,
    data,
  };
  return { body: JSON.stringify(event) };
}

/** One POST of `body`, signed by every signer, never following a redirect; resolves with its status. */
async function postSigned(
  url: string,
  signers: readonly Webhook[],
  id: string,
  sentAt: Date,
  body: string,
  timeoutMs: number,
): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'retrysafe-webhooks',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signers.map((signer) => signer.sign(id, sentAt, body)).join(' '),
    },
    body,
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'manual',
  });
  await res.body?.cancel().catch(() => undefined);
  return res.status;
}

export function createWebhookActivities(deps: WebhookDeps | undefined) {
  const signers = new Map([...(deps?.secrets ?? [])].map(([tenant, secrets]) => [tenant, secrets.map((s) => new Webhook(s))]));
  const retention = new RetentionCache();

  return {
    /** The event's body, from the operation as the API answers it; retried while it still runs. */
    prepareCompletionEvent: (input: NotificationInput) => completionEvent(input, retention),

    /**
     * One POST of the event; any non-2xx (a redirect included: it is not followed), timeout or
     * refused connection is retried until the deadline. `eventId` is the workflow's; events
     * of notifications from before it handed one over keep the ID they were sent with.
     */
    async deliverCompletionEvent(
      operation: OperationRef,
      event: CompletionEvent,
      eventId: string = completionEventId(operation),
    ): Promise<{ attempts: number }> {
      const ctx = Context.current();
      const { attempt } = ctx.info;
      const deliveries = ctx.metricMeter.createCounter(
        'retrysafe_webhook_deliveries',
        'attempts',
        'Completion webhook POSTs by result',
      );
      const count = (result: DeliveryResult) => deliveries.add(1, { result });
      const url = deps?.urls.get(operation.tenant);
      const tenantSigners = signers.get(operation.tenant);
      if (!deps || !url || !tenantSigners?.length) {
        // Retried, not dropped: the worker that picks it up next may know the tenant's URL.
        count('unconfigured');
        throw notDelivered(`no webhook URL or signing secret for tenant ${operation.tenant} on this worker`, attempt);
      }
      const id = eventId;
      const sentAt = new Date();
      const meta = { tenant: operation.tenant, key: operation.key, workflowId: operation.workflowId, webhookId: id, attempt };
      let status: number;
      try {
        status = await postSigned(url, tenantSigners, id, sentAt, event.body, deps.timeoutMs);
      } catch (err) {
        const timedOut = (err as Error).name === 'TimeoutError';
        count(timedOut ? 'timeout' : 'unreachable');
        const why = timedOut ? `no answer within ${deps.timeoutMs} ms` : String((err as Error).cause ?? (err as Error).message);
        ctx.log.warn('webhook not delivered', { ...meta, why });
        throw notDelivered(`webhook not delivered (attempt ${attempt}): ${why}`, attempt);
      }
      if (status < 200 || status > 299) {
        count('rejected');
        ctx.log.warn('webhook refused', { ...meta, status });
        throw notDelivered(`webhook answered ${status} (attempt ${attempt})`, attempt);
      }
      count('delivered');
      ctx.log.info('webhook delivered', { ...meta, status });
      return { attempts: attempt };
    },
  };
}
