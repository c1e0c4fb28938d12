// Terminal outcomes never change, so an instance keeps them, with the claim they answer,
// and answers replays without a round trip to Temporal. Bounded in size, and in time well
// under the namespace retention: an entry must never outlive the key it answers for.
import { LRUCache } from 'lru-cache';
import { isTerminal } from '../../../common/operation-resource.js';
import type { Operation } from '../schemas.js';
import type { Claim } from '../start-options.js';

export interface CachedOperation extends Claim {
  operation: Operation;
}

export class OutcomeCache {
  private readonly entries: LRUCache<string, CachedOperation> | undefined;

  /** `size` 0 turns the cache off. */
  constructor(size: number, ttlMs: number) {
    this.entries = size > 0 ? new LRUCache({ max: size, ttl: ttlMs }) : undefined;
  }

  get(workflowId: string): CachedOperation | undefined {
    return this.entries?.get(workflowId);
  }

  /** Keeps `operation` when it is terminal and its execution carries our claim (a replay must be checked against it). */
  remember(workflowId: string, claim: Claim | undefined, operation: Operation): void {
    if (!this.entries || !isTerminal(operation) || !claim) return;
    this.entries.set(workflowId, { ...claim, operation });
  }
}
