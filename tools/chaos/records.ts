// What the clients of a chaos run record, for the auditor and the report: the status codes
// they saw (per tenant), every terminal outcome of each operation with where it came from,
// every cancel's answer, and the violations of the API contract they met on the way.
import { canonicalJson } from '../../common/http/fingerprint.js';
import type { DefinitionCatalog } from '../../workflows/catalog.js';
import type { PlannedOp } from './plan.js';

export interface Violation {
  /** Which rule: one of the invariants I1..I5 (auditor.ts), or the API contract rule that was broken. */
  rule: string;
  key?: string;
  message: string;
}

/** A cancel a client sent, and what the API answered. */
export interface CancelRecord {
  /** 202 (requested while processing), 409 (already finished), or `network` if no answer came. */
  status: number | 'network';
  /** The operation's step in the 202 answer. */
  step?: string | null;
  code?: string;
  /**
   * Earlier attempts that got no answer or a 5xx: any of them may have reached Temporal, so
   * a later 409 can be the answer to an operation that this very cancel ended.
   */
  unanswered?: number;
}

export interface OpRecord {
  op: PlannedOp;
  /** Some client got a 200 or 202 for it: it must not be lost. */
  accepted: boolean;
  /** The last terminal operation resource a client saw. */
  terminal?: Record<string, unknown>;
  /** Every terminal outcome clients saw, with where it came from. */
  outcomes: Array<{ via: string; signature: string }>;
  requests: number;
  /** No client saw it terminal before the bound. */
  timedOut: boolean;
  changedAmount?: { status: number | 'network'; code?: string; differences?: unknown };
  cancel?: CancelRecord;
  /** When a client first got a 200 or 202 for it (epoch ms). */
  acceptedAt?: number;
}

export interface ClientContext {
  apiUrls: readonly [string, string];
  /** The operations the plan was drawn from: the collection each type is started in. */
  catalog: DefinitionCatalog;
  /** The Authorization header of each tenant. */
  authorization: Readonly<Record<string, string>>;
  /**
   * No client request starts after this (epoch ms). Unbounded while faults are injected;
   * the run sets it once the faults have stopped and every part is up again.
   */
  deadline: number;
  stats: ClientStats;
  violations: Violation[];
}

type Counts = Record<string, number>;

/** What the clients counted: every request they sent (the auditor's reads are not counted) and what answered it. */
export function newClientStats() {
  return {
    requests: 0,
    byStatus: {} as Counts,
    /** The same, per tenant: the flooding tenant's 429s and 503s apart from the others'. */
    byTenant: {} as Record<string, { requests: number; byStatus: Counts }>,
    byApi: [0, 0] as [number, number],
    networkErrors: 0,
    /** Requests beyond the first for the original body of an operation (all its clients), and clients beyond the first at once. */
    retries: 0,
    concurrentClients: 0,
    lateReplays: 0,
    changedAmountSent: 0,
    got422: 0,
    /** 503 answers by problem code (engine_unavailable while Temporal is down, engine_busy past the bound), and per tenant. */
    unavailableByCode: {} as Counts,
    unavailableByTenant: {} as Record<string, Counts>,
    /** The first 503 of each code as it was sent, for the report. */
    unavailableSamples: {} as Record<string, { contentType: string | null; retryAfter: string | null; body: string }>,
    /** Answers to POSTs of an operation that was already terminal, per Idempotent-Replayed value. */
    replayHeader: { true: 0, missing: 0 },
    /** Cancels sent, by where they landed: the step a 202 named (`none` before the first), or `finished` (409). */
    cancelsByStep: {} as Counts,
    /** 408 answers: the instance did not receive a request in time; retried with the same key. */
    requestTimeouts: 0,
  };
}

export type ClientStats = ReturnType<typeof newClientStats>;

/** What must be the same in every answer about a finished operation (invariant 4), as canonical JSON. */
export function outcomeSignature(operation: Record<string, unknown>): string {
  const error = operation.error as { code?: unknown; compensations?: unknown } | undefined | null;
  return canonicalJson({
    status: operation.status,
    code: error?.code ?? null,
    compensations: error?.compensations ?? null,
    result: operation.result ?? null,
  });
}

export function isTerminal(operation: Record<string, unknown>): boolean {
  return operation.status === 'succeeded' || operation.status === 'failed';
}
