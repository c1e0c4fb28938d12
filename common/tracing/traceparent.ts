// The W3C `traceparent` an operation's trace context is kept as (in its input and memo):
// `00-<32 hex trace ID>-<16 hex span ID>-<2 hex flags>`. Pure, so the resource mapping and
// the workflow contracts' readers need no OpenTelemetry to read a trace ID.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

export interface ParsedTraceparent {
  traceId: string;
  spanId: string;
  /** Whether the process that wrote it recorded the trace (flag 01). */
  sampled: boolean;
}

/** The parts of a `traceparent`, or undefined when `value` is not one. */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match || match[1] === INVALID_TRACE_ID || match[2] === INVALID_SPAN_ID) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, sampled: (parseInt(match[3]!, 16) & 1) === 1 };
}

/**
 * The trace ID of a recorded trace from a carrier as the memo keeps it (`{ traceparent }`),
 * or undefined: none was kept, or the trace was not sampled, so no viewer has it.
 */
export function recordedTraceId(carrier: unknown): string | undefined {
  if (typeof carrier !== 'object' || carrier === null) return undefined;
  const parsed = parseTraceparent((carrier as { traceparent?: unknown }).traceparent);
  return parsed?.sampled ? parsed.traceId : undefined;
}
