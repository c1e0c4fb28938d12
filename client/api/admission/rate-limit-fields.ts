// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): structured-field
// lists of one item each, named by the policy they describe: "tenant" (new operations per
// window), "reads" (reads, lists and cancels per window), "waiters" (requests waiting on
// one key at one instance). RateLimit-Policy says the quota and its window; RateLimit what
// is left of it and when the window ends.
//
//   RateLimit-Policy: "tenant";q=50;w=1
//   RateLimit: "tenant";r=0;t=1
import { serializeList } from 'structured-headers';
import type { Rate } from './tenant-limits.js';
import { resetSeconds, type WindowDecision } from './window-store.js';

export type PolicyName = 'tenant' | 'reads' | 'waiters';

export function rateLimitFields(
  policy: PolicyName,
  rate: Pick<Rate, 'quota' | 'windowSeconds'>,
  decision: WindowDecision,
): Record<string, string> {
  return {
    'ratelimit-policy': serializeList([
      [
        policy,
        new Map([
          ['q', rate.quota],
          ['w', rate.windowSeconds],
        ]),
      ],
    ]),
    ratelimit: serializeList([
      [
        policy,
        new Map([
          ['r', decision.remaining],
          ['t', resetSeconds(decision)],
        ]),
      ],
    ]),
  };
}
