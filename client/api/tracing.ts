// The API's own spans, when tracing is on. The start of an operation's workflow is a client
// span around the claim of its key, and its context is what the operation carries as data
// (input and memo): the steps, compensations and webhook deliveries join the trace from it.
// A retry of the key starts nothing: its request span is a short trace of its own, linked to
// the operation's trace (OTLP viewers show the link; Zipkin, which has no links, shows the
// attribute retrysafe.operation.trace_id). Attributes carry the operation's type, tenant,
// workflow ID and codes, never the request's body.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { carrierOf, spanContextOf } from '../../common/tracing/carrier.js';
import { activeTracing } from '../../common/tracing/start.js';
import type { TraceCarrier } from '../../workflows/contracts.js';
import type { OperationRef } from '../../workflows/identity.js';

const TRACER = 'retrysafe-api';

/**
 * Runs the claim of `ref`'s key inside its start span, handing it the span's context to
 * carry; without tracing, runs it with none. The span says whether the claim started the
 * workflow or found the key taken.
 */
export async function traceStart<T extends { started: boolean }>(
  type: string,
  ref: OperationRef,
  claim: (trace: TraceCarrier | undefined) => Promise<T>,
): Promise<T> {
  if (!activeTracing()) return claim(undefined);
  const span = trace.getTracer(TRACER).startSpan(`StartWorkflow:${type}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'retrysafe.operation.type': type,
      'retrysafe.tenant': ref.tenant,
      'retrysafe.workflow_id': ref.workflowId,
    },
  });
  const spanContext = trace.setSpan(context.active(), span);
  try {
    const outcome = await context.with(spanContext, () => claim(carrierOf(spanContext)));
    span.setAttribute('retrysafe.claim', outcome.started ? 'started' : 'taken');
    return outcome;
  } catch (err) {
    // The class says what failed (engine unavailable, deadline); its message stays in the log.
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Marks the request's span as a replay of `ref`'s operation, with a link to the operation's
 * trace that `operationTrace` names (none when the operation was not traced).
 */
export function linkReplay(ref: OperationRef, operationTrace: { traceparent?: unknown } | undefined): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttributes({ 'retrysafe.replayed': true, 'retrysafe.workflow_id': ref.workflowId });
  const linked = spanContextOf(operationTrace);
  if (!linked) return;
  span.addLink({ context: linked, attributes: { 'retrysafe.link': 'operation' } });
  span.setAttribute('retrysafe.operation.trace_id', linked.traceId);
}
