// The worker's spans, started in retrysafe's own activity layer rather than by workflow
// interceptors (which would change what recorded histories replay): one per downstream call
// of a step or compensation, and one per webhook delivery attempt, each a child of the span
// the operation's carrier names (its start in the API). The downstream HTTP call below it is
// undici's client span, whose `traceparent` the service continues. The span is active while
// the call runs; the activity's log lines, which the SDK buffers and writes out later (to
// order them with its core's), take its trace_id and span_id as they are logged
// (traceLogAttributes).
//
// Attributes carry the operation's type, tenant and workflow ID, the step, the derived key,
// the service, the attempt and the outcome, and a refusal's problem code: never a request
// body, an account or a refusal's details. An operation that carries no trace (tracing off
// in the API, or started before it was on) makes no span at all.
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { contextOf } from '../common/tracing/carrier.js';
import { traceLogFields } from '../common/tracing/log-fields.js';
import { activeTracing } from '../common/tracing/start.js';
import type { CompletionEvent, DownstreamTarget, NotificationInput, TraceCarrier } from '../workflows/contracts.js';
import { completionEventId, type OperationRef } from '../workflows/identity.js';
import { DOWNSTREAM_REFUSAL } from './errors.js';

const TRACER = 'retrysafe-worker';

/** What a call's span says happened: a compensation that undid its step is `undone`, one that found nothing `fenced`. */
export type CallOutcome = 'done' | 'replayed' | 'undone' | 'fenced' | 'refused' | 'unavailable';

export interface TracedCall {
  service: string;
  /** The activity, or the declared call (`POST /shipments`). */
  call: string;
  target: DownstreamTarget;
  /** A compensation's call. */
  undo: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function outcomeOf(answer: unknown, undo: boolean): CallOutcome {
  if (isRecord(answer) && answer.status === 'fenced') return 'fenced';
  if (isRecord(answer) && answer.replayed === true) return 'replayed';
  return undo ? 'undone' : 'done';
}

/** The problem code of a downstream's final refusal, or undefined for a transient failure. */
function refusalCodeOf(err: unknown): string | undefined {
  if (!(err instanceof ApplicationFailure) || err.type !== DOWNSTREAM_REFUSAL) return undefined;
  const code = (err.details?.[0] as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

/** Runs `run` in a span of the operation's trace named by `carrier`; without one, just runs it. */
function inSpan<T>(
  carrier: TraceCarrier | undefined,
  name: string,
  attributes: Attributes,
  run: () => Promise<T>,
  ended: { ok(answer: T): Attributes; failed(err: unknown): Attributes & { 'retrysafe.outcome': string } },
): Promise<T> {
  if (!carrier || !activeTracing()) return run();
  const parent = contextOf(carrier);
  const span = trace.getTracer(TRACER).startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  return context.with(trace.setSpan(parent, span), run).then(
    (answer) => {
      span.setAttributes(ended.ok(answer));
      span.end();
      return answer;
    },
    (err: unknown) => {
      const failed = ended.failed(err);
      span.setAttributes(failed);
      // The outcome names it; the failure's message may quote what the downstream refused.
      span.setStatus({ code: SpanStatusCode.ERROR, message: failed['retrysafe.outcome'] });
      span.end();
      throw err;
    },
  );
}

/** A step's or compensation's downstream call, in its span (activities/index.ts track()). */
export function traceCall<T>({ service, call, target, undo }: TracedCall, run: () => Promise<T>): Promise<T> {
  if (!target.trace || !activeTracing()) return run();
  const { info } = Context.current();
  const step = target.step ?? call;
  return inSpan(
    target.trace,
    step,
    {
      'retrysafe.operation.type': info.workflowType,
      'retrysafe.tenant': target.operation.tenant,
      'retrysafe.workflow_id': target.operation.workflowId,
      'retrysafe.step': step,
      'retrysafe.kind': undo ? 'compensation' : 'step',
      'retrysafe.downstream_key': target.downstreamKey,
      'retrysafe.service': service,
      'retrysafe.call': call,
      'retrysafe.attempt': info.attempt,
      'retrysafe.local_attempt': info.isLocal,
    },
    run,
    {
      ok: (answer) => ({ 'retrysafe.outcome': outcomeOf(answer, undo) }),
      failed: (err) => {
        const code = refusalCodeOf(err);
        return code === undefined
          ? { 'retrysafe.outcome': 'unavailable' }
          : { 'retrysafe.outcome': 'refused', 'retrysafe.refusal.code': code };
      },
    },
  );
}

interface WebhookActivities {
  prepareCompletionEvent(input: NotificationInput): Promise<CompletionEvent>;
  deliverCompletionEvent(operation: OperationRef, event: CompletionEvent, eventId?: string): Promise<{ attempts: number }>;
}

/**
 * The completion webhook's activities with each delivery attempt in a span of the
 * operation's trace: the event, made once from the notification's input, carries the trace
 * on to every attempt.
 */
export function traceDeliveries<A extends WebhookActivities>(activities: A): A {
  const { prepareCompletionEvent, deliverCompletionEvent } = activities;
  return {
    ...activities,
    async prepareCompletionEvent(input: NotificationInput): Promise<CompletionEvent> {
      const event = await prepareCompletionEvent(input);
      return input.trace ? { ...event, trace: input.trace } : event;
    },
    deliverCompletionEvent(operation: OperationRef, event: CompletionEvent, eventId?: string): Promise<{ attempts: number }> {
      // The workflow's event ID, when it hands one over, is the one the receiver deduplicates on.
      const attempt = () =>
        eventId === undefined ? deliverCompletionEvent(operation, event) : deliverCompletionEvent(operation, event, eventId);
      if (!event.trace || !activeTracing()) return attempt();
      return inSpan(
        event.trace,
        'completion_webhook',
        {
          'retrysafe.tenant': operation.tenant,
          'retrysafe.workflow_id': operation.workflowId,
          'retrysafe.webhook.id': eventId ?? completionEventId(operation),
          'retrysafe.attempt': Context.current().info.attempt,
        },
        attempt,
        {
          ok: () => ({ 'retrysafe.outcome': 'delivered' }),
          failed: (err) => ({
            'retrysafe.outcome': 'not_delivered',
            ...(err instanceof ApplicationFailure && err.type ? { 'retrysafe.failure': err.type } : {}),
          }),
        },
      );
    },
  };
}

/**
 * Adds the active span's trace_id and span_id to each log line of an activity, when it is
 * logged: the SDK writes the line out later, outside the span's context.
 */
export const traceLogAttributes: ActivityInterceptorsFactory = () => ({
  outbound: { getLogAttributes: (input, next) => ({ ...next(input), ...traceLogFields() }) },
});
