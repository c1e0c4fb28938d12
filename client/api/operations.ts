// Operations on top of Temporal. The claim is `workflow.start` with REJECT_DUPLICATE: the
// workflow ID `<tenant>/<key>` is the unique constraint and the fingerprint rides in the
// memo, written atomically with the execution. There is no check-then-start anywhere:
// a duplicate learns it is one from WorkflowExecutionAlreadyStartedError.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
// The SDK's own decoder of raw visibility rows (memo, search attributes, timestamps); the
// public `workflow.list()` iterator hides the page token that the cursor needs.
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  OPERATION_TYPES,
  type OperationStatus,
  type OperationType,
} from '../../workflows/contracts.js';
import { operationRef } from '../../workflows/identity.js';
import type { ApiConfig } from './config.js';
import { EngineTimeoutError } from './engine-errors.js';
import { fingerprint, requestDifferences } from './fingerprint.js';
import type { ApiMetrics } from './metrics.js';
import { isTerminal, toOperation, type ExecutionView, type ResourceContext } from './operation-resource.js';
import { problems } from './problems.js';
import type { Operation } from './schemas.js';
import { workflowStartOptions, type Claim } from './start-options.js';

interface CachedOperation extends Claim {
  operation: Operation;
}

/** Where a key stands once claimed: started by this request, or found taken (and by what). */
interface ClaimOutcome {
  handle: WorkflowHandle;
  started: boolean;
  /** The claim the existing execution carries (its memo), when the start found the key taken. */
  claimed?: Claim;
  /** The existing execution as a resource; computed once however many requests share the claim. */
  existing?: () => Promise<Operation>;
}

/** The workflow's return value, when a wait saw it complete. */
type KnownOutcome = { value: unknown } | undefined;

export interface SubmitResult {
  operation: Operation;
  /** True when this request did not start the operation (a retry or a concurrent duplicate). */
  replayed: boolean;
}

export interface ListFilter {
  status?: OperationStatus;
  type?: OperationType;
  limit: number;
  cursor?: string;
}

export interface OperationServiceDeps {
  client: Client;
  namespace: string;
  config: ApiConfig;
  metrics: ApiMetrics;
  logger: Logger;
  now: () => Date;
}

function claimFromMemo(memo: Record<string, unknown> | undefined): Claim | undefined {
  if (!memo) return undefined;
  const { type, fingerprint: fp, request } = memo;
  if (!(OPERATION_TYPES as readonly unknown[]).includes(type) || typeof fp !== 'string') return undefined;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return undefined;
  return { type: type as OperationType, fingerprint: fp, request: request as Record<string, unknown> };
}

/** Visibility filter per status. Running executions are `processing` whatever their search attributes say. */
const STATUS_QUERY: Record<OperationStatus, string> = {
  processing: `ExecutionStatus = 'Running'`,
  succeeded: `ExecutionStatus = 'Completed' AND OperationStatus = 'succeeded'`,
  failed:
    `(ExecutionStatus IN ('Failed', 'Terminated', 'Canceled', 'TimedOut') ` +
    `OR (ExecutionStatus = 'Completed' AND OperationStatus = 'failed'))`,
};

// Cursors wrap Temporal's page token with a tag bound to the query. The engine answers a
// garbled token with a retryable UNKNOWN error (a 503 after the engine deadline); the tag
// turns a truncated cursor, or one reused with other filters, into a plain 400.
const CURSOR_TAG_BYTES = 8;

function cursorTag(token: Buffer, query: string): Buffer {
  return createHash('sha256').update(query).update('\n').update(token).digest().subarray(0, CURSOR_TAG_BYTES);
}

export function encodeCursor(token: Buffer, query: string): string {
  return Buffer.concat([cursorTag(token, query), token]).toString('base64url');
}

/** The page token, or null when the cursor was not made for this query. */
export function decodeCursor(cursor: string, query: string): Buffer | null {
  const raw = Buffer.from(cursor, 'base64url');
  if (raw.length <= CURSOR_TAG_BYTES) return null;
  const token = raw.subarray(CURSOR_TAG_BYTES);
  return timingSafeEqual(raw.subarray(0, CURSOR_TAG_BYTES), cursorTag(token, query)) ? token : null;
}

export class OperationService {
  private readonly cache: LRUCache<string, CachedOperation> | undefined;
  private readonly ctx: ResourceContext;
  /** Pending waits, ended on shutdown so they answer 202 at once instead of holding the close. */
  private readonly waits = new Set<AbortController>();
  /** Claims in flight by workflow ID: concurrent duplicates on this instance share one. */
  private readonly claims = new Map<string, Promise<ClaimOutcome>>();
  private closed = false;

  constructor(private readonly deps: OperationServiceDeps) {
    const { cacheSize, cacheTtlMs, temporalUiUrl } = deps.config;
    this.cache = cacheSize > 0 ? new LRUCache({ max: cacheSize, ttl: cacheTtlMs }) : undefined;
    this.ctx = { temporalUiUrl, namespace: deps.namespace };
  }

  /**
   * Runs Temporal calls under a deadline, so a dead engine answers 503 in bounded time. The
   * gRPC deadline alone is not enough: the SDK's retry interceptor sleeps between attempts
   * and only notices an expired deadline on the next one, so a timer aborts the calls too.
   */
  private rpc<T>(fn: () => Promise<T>, timeoutMs = this.deps.config.engineTimeoutMs): Promise<T> {
    const { client } = this.deps;
    const abort = new AbortController();
    const call = client.withAbortSignal(abort.signal, () =>
      client.withDeadline(this.deps.now().getTime() + timeoutMs, fn),
    );
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new EngineTimeoutError(timeoutMs));
      }, timeoutMs);
    });
    return Promise.race([call, expired]).finally(() => {
      clearTimeout(timer);
      // The losing call settles later (cancelled): observe it so it is not an unhandled rejection.
      call.catch(() => undefined);
    });
  }

  /** Claims the key (or finds its claim), then waits up to `waitMs` for the outcome. */
  async submit(
    tenant: string,
    key: string,
    type: OperationType,
    request: Record<string, unknown>,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<SubmitResult> {
    const workflowId = operationRef(tenant, key).workflowId;
    const incoming: Claim = { type, fingerprint: fingerprint(type, request), request };
    const { metrics } = this.deps;

    const cached = this.cache?.get(workflowId);
    if (cached) {
      metrics.cacheHits.inc();
      this.assertSameRequest(cached, incoming);
      metrics.replays.inc({ type });
      return { operation: cached.operation, replayed: true };
    }

    // Concurrent duplicates (a client's retries racing its first try) share one claim,
    // so a burst of them costs Temporal one start, not one start and one describe each.
    let claim = this.claims.get(workflowId);
    const joined = claim !== undefined;
    if (!claim) {
      claim = this.claim(tenant, key, workflowId, incoming);
      this.claims.set(workflowId, claim);
      claim.finally(() => this.claims.delete(workflowId)).catch(() => undefined);
    }
    const { handle, started, claimed, existing } = await claim;
    const replayed = joined || !started;
    if (replayed) {
      this.assertSameRequest(claimed, incoming);
      metrics.replays.inc({ type });
      if (existing) {
        const operation = await existing();
        if (isTerminal(operation)) return { operation, replayed };
      }
    }
    const outcome = waitMs > 0 ? await this.waitForOutcome(handle, waitMs, signal) : undefined;
    const operation = await this.read(handle, outcome);
    if (!isTerminal(operation)) metrics.waitsTimedOut.inc();
    return { operation, replayed };
  }

  /** Starts the workflow, or finds the execution that holds the key and reads its claim. */
  private async claim(tenant: string, key: string, workflowId: string, incoming: Claim): Promise<ClaimOutcome> {
    // Twice at most: the execution a duplicate start ran into may have just passed its
    // retention and been deleted, and then the key is free again.
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await this.rpc(() => this.start(tenant, key, workflowId, incoming));
        this.deps.metrics.operationsStarted.inc({ type: incoming.type });
        return { handle, started: true, claimed: incoming };
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      const handle = this.deps.client.workflow.getHandle(workflowId);
      let desc: WorkflowExecutionDescription;
      try {
        desc = await this.rpc(() => handle.describe());
      } catch (describeErr) {
        if (describeErr instanceof WorkflowNotFoundError && attempt === 0) continue;
        throw describeErr;
      }
      let existing: Promise<Operation> | undefined;
      return {
        handle,
        started: false,
        claimed: claimFromMemo(desc.memo),
        // Read only for requests whose fingerprint matched, and once for all of them.
        existing: () => (existing ??= this.resource(handle, desc)),
      };
    }
  }

  private start(tenant: string, key: string, _workflowId: string, claim: Claim) {
    const { config } = this.deps;
    const settings = {
      stepDeadlineMs: config.stepDeadlineMs,
      attentionAfterMs: config.attentionAfterMs,
      holdTtlSeconds: config.holdTtlSeconds,
    };
    return this.deps.client.workflow.start(claim.type, workflowStartOptions(operationRef(tenant, key), claim, settings, config.taskQueue));
  }

  private assertSameRequest(claimed: Claim | undefined, incoming: Claim): void {
    if (claimed && claimed.type === incoming.type && claimed.fingerprint === incoming.fingerprint) return;
    this.deps.metrics.fingerprintConflicts.inc();
    // An execution without our memo was not started by this API: the key is taken all the same.
    const differences = claimed ? requestDifferences(claimed, incoming) : ['type'];
    throw problems.keyReused(differences);
  }

  /**
   * Waits until the workflow closes, the time is up, or the caller went away. The long
   * poll behind `result()` is cancelled on the way out, so no RPC outlives its request.
   */
  private async waitForOutcome(handle: WorkflowHandle, waitMs: number, signal?: AbortSignal): Promise<KnownOutcome> {
    if (this.closed || signal?.aborted) return undefined;
    // The long poll returns the result itself: kept, so read() need not fetch it again.
    let outcome: KnownOutcome;
    const abort = new AbortController();
    const onCallerGone = () => abort.abort();
    signal?.addEventListener('abort', onCallerGone, { once: true });
    this.waits.add(abort);
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      abort.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const closed = this.deps.client
      .withAbortSignal(abort.signal, () => handle.result())
      .then(
        (value: unknown) => {
          outcome = { value };
        },
        (err: unknown) => {
          // Closed without a value (failed, terminated, timed out): read() tells which.
          if (err instanceof WorkflowFailedError || abort.signal.aborted) return;
          throw err;
        },
      );
    try {
      await Promise.race([closed, stopped]);
    } finally {
      clearTimeout(timer);
      abort.abort();
      this.waits.delete(abort);
      signal?.removeEventListener('abort', onCallerGone);
    }
    return outcome;
  }

  /** Current state of the execution behind `handle`, as an operation resource. */
  private async read(handle: WorkflowHandle, known?: KnownOutcome): Promise<Operation> {
    const desc = await this.rpc(() => handle.describe());
    return this.resource(handle, desc, known);
  }

  /**
   * Builds the resource from a description, with the return value when it completed: the
   * one a wait already received, else fetched. (With REJECT_DUPLICATE a workflow ID has one
   * run, so the value a wait saw is the value of the run described.)
   */
  private async resource(handle: WorkflowHandle, view: ExecutionView, known?: KnownOutcome): Promise<Operation> {
    const outcome =
      view.status.name === 'COMPLETED' ? (known ? known.value : await this.rpc(() => handle.result())) : undefined;
    const operation = toOperation(view, outcome, this.ctx);
    this.remember(view, operation);
    return operation;
  }

  /** Terminal outcomes never change: keep them, with the claim, for replays without a round trip. */
  private remember(view: ExecutionView, operation: Operation): void {
    if (!this.cache || !isTerminal(operation)) return;
    const claim = claimFromMemo(view.memo);
    if (claim) this.cache.set(view.workflowId, { ...claim, operation });
  }

  async get(tenant: string, key: string): Promise<Operation> {
    const workflowId = operationRef(tenant, key).workflowId;
    const cached = this.cache?.get(workflowId);
    if (cached) {
      this.deps.metrics.cacheHits.inc();
      return cached.operation;
    }
    const handle = this.deps.client.workflow.getHandle(workflowId);
    try {
      return await this.read(handle);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw problems.operationNotFound();
      throw err;
    }
  }

  /** One page of the tenant's operations from the visibility store. */
  async list(tenant: string, filter: ListFilter): Promise<{ operations: Operation[]; nextCursor: string | null }> {
    const { client, namespace } = this.deps;
    // Tenants are [A-Za-z0-9_.-] and the other values come from enums: nothing to escape.
    const clauses = [`Tenant = '${tenant}'`];
    if (filter.type) clauses.push(`OperationType = '${filter.type}'`);
    if (filter.status) clauses.push(STATUS_QUERY[filter.status]);
    const query = clauses.join(' AND ');
    const nextPageToken = filter.cursor !== undefined ? decodeCursor(filter.cursor, query) : undefined;
    if (nextPageToken === null) {
      throw problems.invalidRequest('the cursor is not valid for this query', [
        { field: 'cursor', message: 'is not the nextCursor of a previous page of this query' },
      ]);
    }
    const response = await this.rpc(() =>
      client.workflowService.listWorkflowExecutions({ namespace, query, pageSize: filter.limit, nextPageToken }),
    );
    const operations: Operation[] = [];
    for (const raw of response.executions ?? []) {
      const info = await executionInfoFromRaw(raw, client.options.loadedDataConverter, raw, namespace);
      const cached = this.cache?.get(info.workflowId);
      if (cached) {
        operations.push(cached.operation);
        continue;
      }
      let operation = toOperation(info, undefined, this.ctx);
      // Completed, but the search attribute was not updated: only the return value can tell.
      if (info.status.name === 'COMPLETED' && !isTerminal(operation)) {
        operation = await this.resource(client.workflow.getHandle(info.workflowId, info.runId), info);
      }
      operations.push(operation);
    }
    const token = response.nextPageToken;
    return {
      operations,
      nextCursor: token && token.length > 0 ? encodeCursor(Buffer.from(token), query) : null,
    };
  }

  /** Ends every pending wait (their requests answer 202 with the operation still running). */
  close(): void {
    this.closed = true;
    for (const wait of this.waits) wait.abort();
  }

  /** Answers whether Temporal responds, within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    try {
      await this.rpc(() => this.deps.client.workflowService.getSystemInfo({}), timeoutMs);
      return true;
    } catch (err) {
      this.deps.logger.warn({ err }, 'temporal is not reachable');
      return false;
    }
  }
}
