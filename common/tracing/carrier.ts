// An operation's trace context as data: taken from the active span where the API starts the
// workflow, put into its input and memo, and continued by the worker from the target each
// step, compensation and delivery is handed. Through the global propagator, so with tracing
// off (no propagator) nothing is carried and nothing is continued.
import { context, propagation, ROOT_CONTEXT, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';
import type { TraceCarrier } from '../../workflows/contracts.js';
import { parseTraceparent } from './traceparent.js';

/** The context `ctx` (the active one by default) as a carrier; undefined when there is no trace to carry. */
export function carrierOf(ctx: Context = context.active()): TraceCarrier | undefined {
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers);
  const { traceparent, tracestate } = headers;
  if (!traceparent) return undefined;
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The context a carrier continues: its span is the remote parent of the spans started in it. */
export function contextOf(carrier: TraceCarrier): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The span a carrier names, for a span link (a retry of the key links to its operation's trace). */
export function spanContextOf(carrier: { traceparent?: unknown } | undefined): SpanContext | undefined {
  const parsed = parseTraceparent(carrier?.traceparent);
  if (!parsed) return undefined;
  return {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: parsed.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  };
}
