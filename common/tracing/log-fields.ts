// Log lines joined to traces: every line written inside a traced request, step or delivery
// carries `trace_id` and `span_id`. pino's mixin (common/logger.ts) asks here on each line:
// the span bound to the line's logger (an HTTP request binds its span to request.log, since
// Fastify's later hooks and its "request completed" line run outside the request's async
// context), else the active span (a worker's step, whose activity logs reach pino through
// the SDK's logger in the step's own context). Without tracing there is never a span: the
// cost is a lookup that finds nothing.
import { context, trace, TraceFlags, type Span } from '@opentelemetry/api';

const LOG_SPAN = Symbol.for('retrysafe.log-span');

type WithSpan = { [LOG_SPAN]?: Span };

/** Binds `span` to `logger` and to the loggers made from it later (pino's children inherit it). */
export function bindSpanToLogger(logger: object, span: Span): void {
  (logger as WithSpan)[LOG_SPAN] = span;
}

/** `{ trace_id, span_id }` of the span a line belongs to, when it is recorded; else an empty object. */
export function traceLogFields(logger?: object): Record<string, string> {
  const span = (logger as WithSpan | undefined)?.[LOG_SPAN] ?? trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  // An unsampled span exists, but no viewer will ever show it.
  if ((traceFlags & TraceFlags.SAMPLED) === 0) return {};
  return { trace_id: traceId, span_id: spanId };
}
