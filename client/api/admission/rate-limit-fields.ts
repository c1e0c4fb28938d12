// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): structured-field
// lists of one item each, named by the policy they describe: "tenant" (new operations per
// window), "reads" (reads, lists and cancels per window), "waiters" (requests waiting on
// one key at one instance). RateLimit-Policy says the quota and its window; RateLimit what
// is left of it and when the window ends.
//
//   RateLimit-Policy: "tenant";q=50;w=1
//   RateLimit: "tenant";r=0;t=1
import type { Rate } from './tenant-limits.js';
import { resetSeconds, type WindowDecision } from './window-store.js';

export type PolicyName = 'tenant' | 'reads' | 'waiters';

// Written out rather than through a structured-field serializer: every member is a fixed
// token or a whole number, so the text is exact (the tests parse it back as structured
// fields), and a refusal during a flood should cost as little as it can.
export function rateLimitFields(
  policy: PolicyName,
  rate: Pick<Rate, 'quota' | 'windowSeconds'>,
  decision: WindowDecision,
): Record<string, string> {
  return {
    'ratelimit-policy': `"${policy}";q=${rate.quota};w=${rate.windowSeconds}`,
    ratelimit: `"${policy}";r=${decision.remaining};t=${resetSeconds(decision)}`,
  };
}
