// Terminal outcomes never change, so an instance keeps them, with the claim they answer,
// and answers replays without a round trip to Temporal. Bounded in entries and in bytes (a
// resource's size depends on its definition and on what a tenant sent, so a count alone
// bounds nothing), and in time well under the namespace retention: an entry must never
// outlive the key it answers for.
import { LRUCache } from 'lru-cache';
import { isTerminal } from '../../../common/resource.js';
import type { Operation } from '../schemas.js';
import type { Claim } from '../start-options.js';

export interface CachedOperation extends Claim {
  operation: Operation;
}

/** What an entry costs: its key and its JSON, in UTF-8 bytes, and a little for the cache's own bookkeeping. */
export function entryBytes(key: string, value: unknown): number {
  return Buffer.byteLength(key) + Buffer.byteLength(JSON.stringify(value) ?? '') + 64;
}

export class OutcomeCache {
  private readonly entries: LRUCache<string, CachedOperation> | undefined;

  /** `size` 0 turns the cache off; `maxBytes` bounds what its entries hold together. */
  constructor(size: number, ttlMs: number, maxBytes = 64 * 1024 * 1024) {
    this.entries =
      size > 0
        ? new LRUCache({ max: size, ttl: ttlMs, maxSize: maxBytes, sizeCalculation: (value, key) => entryBytes(key, value) })
        : undefined;
  }

  get(workflowId: string): CachedOperation | undefined {
    return this.entries?.get(workflowId);
  }

  /** Keeps `operation` when it is terminal and its execution carries our claim (a replay must be checked against it). */
  remember(workflowId: string, claim: Claim | undefined, operation: Operation): void {
    if (!this.entries || !isTerminal(operation) || !claim) return;
    // An entry larger than the whole bound is not kept (lru-cache refuses it; nothing is evicted for it).
    this.entries.set(workflowId, { ...claim, operation });
  }
}
