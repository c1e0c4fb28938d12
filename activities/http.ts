// The one place activities speak HTTP to downstream services: JSON in and out, a
// per-request timeout, and the Idempotency-Key header on effect calls.
import { Context, type Info } from '@temporalio/activity';

export interface DownstreamAnswer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

export interface HttpOptions {
  baseUrl: string;
  /** Per-request timeout; keep it below the activity's start-to-close timeout. */
  timeoutMs: number;
}

export async function callDownstream(
  opts: HttpOptions,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  init: { idempotencyKey?: string; body?: unknown } = {},
): Promise<DownstreamAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const requestId = currentRequestId();
  if (requestId) headers['x-request-id'] = requestId;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.idempotencyKey !== undefined) headers['idempotency-key'] = init.idempotencyKey;
  const res = await fetch(`${opts.baseUrl}${path}`, {
    method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  if (text) {
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { raw: text.slice(0, 200) };
    }
  }
  return { status: res.status, body, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** One line for logs and failure messages: `bank answered 402 insufficient_funds: …`. */
export function describeAnswer(service: string, answer: DownstreamAnswer): string {
  const { code, detail, title } = answer.body;
  const why = detail ?? title;
  return `${service} answered ${answer.status}${code ? ` ${String(code)}` : ''}${why ? `: ${String(why)}` : ''}`;
}

/**
 * `<workflowId>:<activityId>#<attempt>`: sent as X-Request-Id and logged by the worker as
 * `requestId`, as the sandboxes log the header, so both sides' lines about one attempt meet.
 */
export function requestIdOf(info: Info): string {
  return `${info.workflowExecution?.workflowId ?? ''}:${info.activityId}#${info.attempt}`;
}

function currentRequestId(): string | undefined {
  try {
    return requestIdOf(Context.current().info);
  } catch {
    return undefined; // called outside an activity (a script or a test)
  }
}

export function pathKey(key: string): string {
  return encodeURIComponent(key);
}
