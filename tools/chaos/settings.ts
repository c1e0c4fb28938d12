// The fixed settings of a chaos run, the same for every seed: the stack's short deadlines,
// the two tenants, the flood's shape and the default load. They are part of the plan's
// hash (plan.ts), so a change to any of them gives a new schedule hash.

/** Settings of the chaos stack: short deadlines so fences and NeedsAttention happen within a run. */
export const CHAOS_TIMINGS = {
  /** RETRYSAFE_STEP_DEADLINE: reconciliation deadline of each step. */
  stepDeadlineMs: 8_000,
  /** RETRYSAFE_ATTENTION_AFTER: a compensation failing this long marks NeedsAttention. */
  attentionAfterMs: 5_000,
  /** DOWNSTREAM_TIMEOUT of the workers: an injected delay longer than this loses the answer. */
  downstreamTimeoutMs: 2_000,
} as const;

/** The run's tenants: the one whose operations carry the plan, and the one that floods. */
export const TENANTS = { main: 'chaos', flood: 'flood' } as const;

/**
 * The flood window: one tenant sends a burst of new operations far past its share, every
 * first request to one API instance at once. That instance lets one tenant hold three
 * quarters of its places (its engine bound): the burst is larger, so part of it is refused
 * 503 engine_busy on arrival; of the requests that find a place, those past the tenant's
 * rate are refused 429. The other tenant is not limited, and the bound is the default, so
 * its share of the engine is what it would be in production.
 */
export const FLOOD = {
  /**
   * RETRYSAFE_TENANT_LIMITS entry of the flooding tenant: what the engine takes from it. At
   * 20/s the burst started more workflows than the dev server on a loaded 2-core machine
   * completes, and the other tenant's retries and the refused requests' lookups kept it
   * there for minutes.
   */
  rate: '5/s',
  /**
   * RETRYSAFE_IN_FLIGHT_CEILING of each API instance (the default): the adaptive limit starts
   * there and falls as the engine queues; while the other tenant asks too, the flood's share is half.
   */
  maxInFlight: 64,
  /** The instance every first request of the flood goes to. */
  api: 0,
  /** Flood requests wait for their outcome, holding their place in the bound meanwhile. */
  prefer: 'wait=10',
  /** Every first request of the flood goes out within this: a burst, not a ramp. */
  spreadMs: 200,
  /**
   * Its operations: more than the 48 places one tenant may hold at the instance it floods,
   * whatever the run's length (a burst, not a second load: a larger one only lengthens the
   * time the engine takes to catch up).
   */
  size: 60,
} as const;

/** Ops per second of load when --ops is not given: 5 minutes make about 570 operations. */
export const DEFAULT_OPS_PER_SECOND = 1.9;
