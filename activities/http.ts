// The one place activities speak HTTP to downstream services: JSON in and out, a
// per-request timeout, and the Idempotency-Key header on effect calls.
//
// A call goes only where it was sent: a redirect is never followed (it would re-send the
// body and the Idempotency-Key to whatever host the answer names), it is an answer like any
// other non-2xx, transient, so the step retries with the same key and is fenced at its
// deadline. An answer is read up to MAX_ANSWER_BYTES (a step's answer is copied into the
// workflow's history); a larger one fails the attempt for good, and the saga fences it.
// What a downstream says about why it refused (a balance, an account) stays in the worker's
// log at debug: the failure, which reaches the tenant's error message, names the code.
import { ApplicationFailure, Context, type Info } from '@temporalio/activity';
import { downstreamRefusal, DownstreamUnavailableError } from './errors.js';

/** The largest answer a call reads; a downstream's JSON answer is a few hundred bytes. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The failure type of an answer larger than MAX_ANSWER_BYTES: final, so the step is fenced at once. */
export const ANSWER_TOO_LARGE = 'DownstreamAnswerTooLarge';

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
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
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
    redirect: 'manual',
  });
  const text = await readBounded(res, MAX_ANSWER_BYTES);
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

/**
 * The answer's body as text, refused past `limit` bytes: it is read as it streams, so a
 * huge answer is never held, and the rest of it is not read at all.
 */
async function readBounded(res: Response, limit: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw answerTooLarge(limit);
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) {
      await res.body.cancel().catch(() => undefined);
      throw answerTooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function answerTooLarge(limit: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: ANSWER_TOO_LARGE,
    message: `the downstream's answer is larger than ${limit / 1024} KiB; it was not read`,
    nonRetryable: true,
  });
}

/** Answers that mean "not now" rather than "no": in progress, too early, too many, or the server's fault. */
const TRANSIENT_4XX: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/**
 * The one rule that classifies a downstream's answer to an effect call: 2xx is the answer;
 * any other 4xx is final (a refusal, whose problem code the step's definition may list as a
 * business error); 408, 409, 425, 429, 3xx (never followed), 5xx and anything unexpected
 * are transient, retried with the same key until the step's deadline.
 */
export function expectSuccess(service: string, answer: DownstreamAnswer): DownstreamAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  const message = describeAnswer(service, answer);
  logRefusalDetail(service, answer);
  if (answer.status >= 400 && answer.status < 500 && !TRANSIENT_4XX.has(answer.status)) {
    throw downstreamRefusal(message, answer.status, typeof answer.body.code === 'string' ? answer.body.code : '');
  }
  throw new DownstreamUnavailableError(message);
}

/** A compensation's answer: only 2xx ends it; anything else is retried until it succeeds. */
export function expectUndone(service: string, answer: DownstreamAnswer): DownstreamAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  logRefusalDetail(service, answer);
  throw new DownstreamUnavailableError(describeAnswer(service, answer));
}

/**
 * One line for failure messages and logs, naming the status and the problem code:
 * `bank answered 402 insufficient_funds`, `bank answered 307 (a redirect, not followed)`.
 * Never the answer's `detail` or `title`: a downstream's words may hold an account or a
 * balance, and this line reaches the tenant's error message, its webhooks and info logs.
 */
export function describeAnswer(service: string, answer: DownstreamAnswer): string {
  const code = typeof answer.body.code === 'string' && /^[\w.-]{1,64}$/.test(answer.body.code) ? answer.body.code : undefined;
  const redirect = answer.status >= 300 && answer.status < 400 ? ' (a redirect, not followed)' : '';
  return `${service} answered ${answer.status}${code ? ` ${code}` : ''}${redirect}`;
}

/** What the downstream said about its refusal, for the operator only: the worker's log, at debug. */
function logRefusalDetail(service: string, answer: DownstreamAnswer): void {
  const { detail, title } = answer.body;
  if (detail === undefined && title === undefined) return;
  try {
    Context.current().log.debug(`${service} refusal detail`, { service, status: answer.status, detail, title });
  } catch {
    // Outside an activity (a script or a test) there is no worker log to write to.
  }
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

/**
 * A path with `{key}` filled in by the downstream key, escaped: the one way every call
 * names what was done under a key. Escaped,
 * the key holds no `$` that replaceAll would read as a pattern.
 */
export function keyedPath(path: string, key: string): string {
  return path.replaceAll('{key}', encodeURIComponent(key));
}
