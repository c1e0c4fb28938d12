// The in-flight limit of one API instance, moved by the engine's measured latency so the
// engine stays just below saturation. A saturated engine does not finish more operations
// per second when more are in flight; it only makes every one of them (another tenant's
// too) wait longer in its queues. So the signal is latency: while operations finish about
// as fast as they do unloaded, there is room and the limit may grow; once they take longer,
// work is queueing inside the engine and the limit shrinks, in proportion to how far the
// latency is over its target.
//
// The sample is the latency of each new operation this instance started, from the moment it
// was admitted to the moment its outcome was known (a POST that waited for it); a POST
// whose wait ended first is a sample too, as a lower bound, when that bound already says
// "slow". Operations differ in what they do (a payment is one bank call, a checkout three),
// so each kind (type and outcome) is compared with its own unloaded latency:
//
//   current  = moving average of the kind's latencies (smooths one slow sample out)
//   unloaded = the lowest `current` of the last ten minutes (the baseline)
//   ratio    = current / unloaded          1 when unloaded, above 1 when work queues
//
//   ratio above the target: limit × (1 - 0.2 × (1 - max(½, target / ratio)))  (at most -10 % a sample)
//   ratio at or under it, and the limit in use: limit + 1 / limit            (about +1 per limit's worth of samples)
//   always within [floor, ceiling]
//
// Which algorithm, and why: this is the gradient rule of Netflix's concurrency-limits
// (Gradient2: limit × gradient, the gradient being how far the latency is from its
// tolerated value, clamped at ½, smoothed) with a Vegas-style baseline (TCP Vegas and
// concurrency-limits' Vegas compare with the unloaded latency, not with a long-term average,
// so a flood that lasts cannot make its own latency the new normal) and an additive
// increase instead of Gradient2's square-root queue allowance (which keeps the limit from
// going under about four: on a small engine the right limit may be two). Not plain AIMD:
// halving at every slow sample makes the limit saw between half and full, and the quiet
// tenant's latency with it; the gradient cuts by how slow the engine is. Not plain Vegas:
// its thresholds are counts of queued operations, which depend on the engine's size; a
// latency ratio means the same on any engine, and it is the one number to set — the
// target, how far below saturation the engine is held (1.5: operations may take half as
// long again as unloaded). A lower target gives the other tenants lower latency and the
// busy tenant less throughput; sweeping it draws that trade-off.
//
// The limit only grows while it is in use (at least half of it taken): a quiet instance
// does not drift to its ceiling and then let a sudden flood in all at once.

/** How the limit moves: its floor, its ceiling and the latency ratio it aims at. */
export interface AdaptiveLimitSettings {
  floor: number;
  ceiling: number;
  /** The latency aimed at, as a multiple of the unloaded latency (above 1). */
  target: number;
}

/** Weight of a new sample in a kind's moving average. */
const AVERAGE_WEIGHT = 0.2;
/** Samples of a kind before its baseline counts (its first few are too few to trust). */
const WARM_UP_SAMPLES = 5;
/** The baseline is the lowest average over two buckets of this length: ten minutes at least. */
const BASELINE_BUCKET_MS = 5 * 60_000;
/** The largest cut of one sample is SMOOTHING × ½: 10 %. */
const SMOOTHING = 0.2;
const MIN_GRADIENT = 0.5;

/** The lowest value seen in the current and the previous bucket of time. */
class WindowedMin {
  private current = Infinity;
  private previous = Infinity;
  private bucketStart: number;

  constructor(now: number) {
    this.bucketStart = now;
  }

  add(value: number, now: number): number {
    if (now - this.bucketStart >= BASELINE_BUCKET_MS) {
      // A bucket and more went by: what is older than the previous bucket is forgotten.
      this.previous = now - this.bucketStart >= 2 * BASELINE_BUCKET_MS ? Infinity : this.current;
      this.current = Infinity;
      this.bucketStart = now;
    }
    this.current = Math.min(this.current, value);
    return Math.min(this.current, this.previous);
  }
}

interface Kind {
  samples: number;
  average: number;
  baseline: WindowedMin;
}

export interface LimitSample {
  /** The operation's kind: its type and how it ended (`payment:succeeded`). */
  kind: string;
  latencyMs: number;
  /** True when the outcome was not known yet: the latency is a lower bound. */
  censored?: boolean;
  /** New operations this instance holds in flight when the sample arrives. */
  inFlight: number;
}

export class AdaptiveLimit {
  private value: number;
  private lastRatio = 1;
  private readonly kinds = new Map<string, Kind>();

  constructor(
    readonly settings: AdaptiveLimitSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    // The ceiling at first: an engine is assumed to have room until it is measured.
    this.value = settings.ceiling;
  }

  /** Places for new operations, a whole number within [floor, ceiling]. */
  get limit(): number {
    return Math.max(this.settings.floor, Math.min(this.settings.ceiling, Math.floor(this.value)));
  }

  /** The latest latency ratio (current ÷ unloaded) that moved the limit; 1 before any. */
  get ratio(): number {
    return this.lastRatio;
  }

  /** Feeds one operation's latency; answers the limit after it. */
  sample(s: LimitSample): number {
    const ratio = this.ratioOf(s);
    if (ratio === undefined) return this.limit;
    this.lastRatio = ratio;
    const { floor, ceiling, target } = this.settings;
    if (ratio > target) {
      const gradient = Math.max(MIN_GRADIENT, target / ratio);
      this.value *= 1 - SMOOTHING * (1 - gradient);
    } else if (s.inFlight >= this.value / 2) {
      this.value += 1 / Math.max(1, this.value);
    }
    this.value = Math.max(floor, Math.min(ceiling, this.value));
    return this.limit;
  }

  /** The kind's current latency over its unloaded latency, or undefined while it is warming up. */
  private ratioOf(s: LimitSample): number | undefined {
    const now = this.now();
    let kind = this.kinds.get(s.kind);
    if (!kind) {
      if (s.censored) return undefined;
      kind = { samples: 0, average: s.latencyMs, baseline: new WindowedMin(now) };
      this.kinds.set(s.kind, kind);
    }
    // A lower bound says something only when it is already above the current average.
    if (s.censored && s.latencyMs <= kind.average) return undefined;
    if (!s.censored) kind.samples++;
    kind.average += AVERAGE_WEIGHT * (s.latencyMs - kind.average);
    if (kind.samples < WARM_UP_SAMPLES) return undefined;
    const unloaded = kind.baseline.add(kind.average, now);
    return unloaded > 0 ? kind.average / unloaded : 1;
  }
}
