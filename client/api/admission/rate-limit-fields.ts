// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): structured-field
// lists of one item each, the policy named "tenant". RateLimit-Policy says the quota and
// its window; RateLimit what is left of it and when the window ends.
//
//   RateLimit-Policy: "tenant";q=50;w=1
//   RateLimit: "tenant";r=0;t=1
import { serializeList } from 'structured-headers';
import type { Rate } from './tenant-limits.js';
import type { WindowDecision } from './rate-windows.js';

export const POLICY_NAME = 'tenant';

export function rateLimitFields(rate: Rate, decision: WindowDecision): Record<string, string> {
  return {
    'ratelimit-policy': serializeList([
      [
        POLICY_NAME,
        new Map([
          ['q', rate.quota],
          ['w', rate.windowSeconds],
        ]),
      ],
    ]),
    ratelimit: serializeList([
      [
        POLICY_NAME,
        new Map([
          ['r', decision.remaining],
          ['t', decision.resetSeconds],
        ]),
      ],
    ]),
  };
}
