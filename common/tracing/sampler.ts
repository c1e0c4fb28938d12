// The sampler a process gets from OTEL_TRACES_SAMPLER(+_ARG). The API is the edge where
// tenants' requests arrive: a tenant's `traceparent` may parent its span (the trace joins
// the tenant's own), but its sampled flag is a request, not a decision, and its trace ID is
// chosen by the tenant, so neither may decide whether retrysafe records the operation.
// There a span with a remote parent is sampled as a root would be, by a draw of our own at
// the configured ratio; every other process follows its parent, which is one of ours.
import { trace, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
import type { SamplerSettings } from './config.js';

/** Samples a span with a remote parent at `ratio`, whatever the parent says; any other span as `inner` does. */
export class EdgeSampler implements Sampler {
  constructor(
    private readonly inner: Sampler,
    private readonly ratio: number,
    private readonly random: () => number = Math.random,
  ) {}

  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (trace.getSpanContext(context)?.isRemote !== true) {
      return this.inner.shouldSample(context, traceId, name, kind, attributes, links);
    }
    const sampled = this.ratio >= 1 || (this.ratio > 0 && this.random() < this.ratio);
    return { decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `EdgeSampler{remote parents at ${this.ratio}, others ${this.inner.toString()}}`;
  }
}

/** The root sampler a name stands for, and the ratio it samples roots at. */
function root({ name, ratio }: SamplerSettings): { sampler: Sampler; ratio: number } {
  if (name.endsWith('always_on')) return { sampler: new AlwaysOnSampler(), ratio: 1 };
  if (name.endsWith('always_off')) return { sampler: new AlwaysOffSampler(), ratio: 0 };
  return { sampler: new TraceIdRatioBasedSampler(ratio), ratio };
}

/** The sampler of the settings; `edge` for the process that receives tenants' requests. */
export function createSampler(settings: SamplerSettings, { edge }: { edge: boolean }): Sampler {
  const { sampler: rootSampler, ratio } = root(settings);
  const sampler = settings.name.startsWith('parentbased_') ? new ParentBasedSampler({ root: rootSampler }) : rootSampler;
  return edge ? new EdgeSampler(sampler, ratio) : sampler;
}
