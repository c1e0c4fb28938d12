// Operations on top of Temporal, composed from one module per job: the claim of a key
// (claim.ts), the deadline of every engine call (engine-deadline.ts), the long poll for an
// outcome (outcome-wait.ts), the cache of terminal outcomes (outcome-cache.ts), the
// visibility listing with its cursor (visibility.ts, cursor.ts), the completion webhook's
// state (notification.ts) and the cancel of a running operation (cancel below).
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import type { Logger } from 'pino';
import { describeRetention, RetentionCache } from '../../../common/retention.js';
import type { OperationSettings } from '../../../workflows/contracts.js';
import type { OperationDefinition } from '../../../workflows/definition.js';
import type { OperationRef } from '../../../workflows/identity.js';
import type { OperationProgram } from '../../../workflows/program.js';
import type { DefinitionCatalog } from '../../../workflows/catalog.js';
import type { ApiConfig } from '../config.js';
import { GrpcCode, grpcCode } from '../engine-errors.js';
import { fingerprint } from '../fingerprint.js';
import type { ApiMetrics } from '../metrics.js';
import {
  isTerminal,
  operationFromOutcome,
  toOperation,
  type ExecutionView,
  type ResourceContext,
} from '../../../common/resource.js';
import { boundRequest } from '../requests.js';
import { problems } from '../problems.js';
import type { Operation } from '../schemas.js';
import { workflowStartOptions, type Claim } from '../start-options.js';
import { linkReplay, traceStart } from '../tracing.js';
import { claimConflict, claimFromMemo, claimKey, SharedClaims, type ClaimOutcome } from './claim.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { engineDeadline, type EngineCall } from './deadline.js';
import { OutcomeCache } from './outcome-cache.js';
import { OutcomeWaits, type KnownOutcome } from './outcome-wait.js';
import { NotificationReader } from './notification.js';
import { looksStuck, STUCK_QUERY, stuckReason } from './stuck.js';
import { listPage, visibilityQuery, type ListFilter } from './visibility.js';

export interface SubmitResult {
  operation: Operation;
  /** True when this request did not start the operation (a retry or a concurrent duplicate). */
  replayed: boolean;
}

export interface ListRequest extends ListFilter {
  limit: number;
  cursor?: string;
}

export interface OperationServiceDeps {
  client: Client;
  /** The operations this API starts. */
  catalog: DefinitionCatalog;
  /** The program each of them starts with now (common/programs.ts). */
  programs: ReadonlyMap<string, OperationProgram>;
  namespace: string;
  config: ApiConfig;
  metrics: ApiMetrics;
  logger: Logger;
  now: () => Date;
}

/** A claim as the requests sharing it see it: the existing execution is read once for all of them. */
interface SharedClaim extends ClaimOutcome {
  existingOperation?: () => Promise<Operation>;
}

export class OperationService {
  private readonly call: EngineCall;
  private readonly cache: OutcomeCache;
  private readonly waits: OutcomeWaits;
  private readonly claims = new SharedClaims<SharedClaim>();
  private readonly ctx: ResourceContext;
  private readonly notifications: NotificationReader;
  private readonly retention = new RetentionCache();

  constructor(private readonly deps: OperationServiceDeps) {
    const { config, client, namespace } = deps;
    this.call = engineDeadline(client, config.engineTimeoutMs, deps.now);
    this.cache = new OutcomeCache(config.cacheSize, config.cacheTtlMs, config.cacheBytes);
    this.waits = new OutcomeWaits(client, namespace);
    this.ctx = { temporalUiUrl: config.temporalUiUrl, namespace };
    this.notifications = new NotificationReader(client, this.call, config.cacheSize, config.cacheTtlMs, config.cacheBytes);
  }

  /** Claims the key (or finds its claim), then waits up to `waitMs` for the outcome. */
  async submit(
    ref: OperationRef,
    definition: OperationDefinition,
    request: Record<string, unknown>,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<SubmitResult> {
    const { type } = definition;
    const incoming: Claim = { type, fingerprint: fingerprint(type, boundRequest(definition, request)), request };
    const { metrics } = this.deps;

    const cached = this.cache.get(ref.workflowId);
    if (cached) {
      metrics.cacheHits.inc();
      this.assertSameRequest(cached, incoming);
      metrics.replays.inc({ type });
      linkReplay(ref, cached.trace);
      return { operation: await this.withNotification(ref, cached.operation), replayed: true };
    }

    const { claim, joined } = this.claims.join(ref.workflowId, () => this.claim(ref, definition, incoming));
    const { handle, started, claimed, existingOperation } = await claim;
    const replayed = joined || !started;
    if (replayed) {
      this.assertSameRequest(claimed, incoming);
      metrics.replays.inc({ type });
      linkReplay(ref, claimed?.trace);
      if (existingOperation) {
        const operation = await existingOperation();
        if (isTerminal(operation)) return { operation: await this.withNotification(ref, operation), replayed };
      }
    }
    if (waitMs <= 0) return { operation: await this.withNotification(ref, await this.read(handle)), replayed };
    const known = await this.waits.wait(handle, waitMs, signal);
    // The usual end of a new operation: it completed while we waited, and its return value
    // and close time are the whole answer (the claim is the one checked above).
    const answered =
      known && operationFromOutcome(ref.workflowId, known.value, known.closedAt, await this.closedContext(), claimed?.trace);
    if (answered) {
      this.cache.remember(ref.workflowId, claimed, answered);
      return { operation: await this.withNotification(ref, answered), replayed };
    }
    const operation = await this.read(handle, known);
    // Only a POST that asked to wait can have waited in vain; respond-async asked not to.
    if (!isTerminal(operation)) metrics.waitsTimedOut.inc();
    return { operation: await this.withNotification(ref, operation), replayed };
  }

  private async claim(ref: OperationRef, definition: OperationDefinition, incoming: Claim): Promise<SharedClaim> {
    const { client, config, metrics } = this.deps;
    const settings: OperationSettings = {
      stepDeadlineMs: config.stepDeadlineMs,
      attentionAfterMs: config.attentionAfterMs,
      // Only a tenant with a webhook: every other operation's input stays as it was.
      ...(config.webhooks.tenants.has(ref.tenant)
        ? { notify: { deadlineMs: config.webhooks.deadlineMs, temporalUiUrl: config.temporalUiUrl } }
        : {}),
    };
    const outcome = await traceStart(incoming.type, ref, (trace) =>
      claimKey(
        {
          client,
          call: this.call,
          start: (r, c) =>
            client.workflow.start(
              c.type,
              workflowStartOptions(definition, this.programOf(c.type), r, c, settings, config.taskQueue),
            ),
        },
        ref,
        trace ? { ...incoming, trace } : incoming,
      ),
    );
    if (outcome.started) metrics.operationsStarted.inc({ type: incoming.type });
    const { existing } = outcome;
    if (!existing) return outcome;
    let read: Promise<Operation> | undefined;
    // Read only for requests whose fingerprint matched, and once for all of them.
    return { ...outcome, existingOperation: () => (read ??= this.resource(outcome.handle, existing)) };
  }

  private programOf(type: string): OperationProgram {
    const program = this.deps.programs.get(type);
    if (!program) throw new Error(`no program for operation type ${type}`);
    return program;
  }

  private assertSameRequest(claimed: Claim | undefined, incoming: Claim): void {
    const differences = claimConflict(claimed, incoming, (request) =>
      boundRequest(this.deps.catalog.get(incoming.type), request),
    );
    if (differences === undefined) return;
    this.deps.metrics.fingerprintConflicts.inc();
    throw problems.keyReused(differences);
  }

  /** Current state of the execution behind `handle`, as an operation resource. */
  private async read(handle: WorkflowHandle, known?: KnownOutcome): Promise<Operation> {
    const desc = await this.call(() => handle.describe());
    return this.resource(handle, await this.withStuck(desc), known);
  }

  /** A running execution whose workflow tasks keep failing says why (the engine's reason). */
  private async withStuck<V extends ExecutionView & { raw: WorkflowExecutionDescription['raw'] }>(view: V): Promise<V> {
    if (view.status.name !== 'RUNNING' || !looksStuck(view.raw)) return view;
    const { client, namespace } = this.deps;
    return { ...view, stuck: await stuckReason(client, namespace, this.call, view.raw) };
  }

  /**
   * Builds the resource from a description, with the return value when it completed: the
   * one a wait already received, else fetched. (With REJECT_DUPLICATE a workflow ID has one
   * run, so the value a wait saw is the value of the run described.)
   */
  private async resource(handle: WorkflowHandle, view: ExecutionView, known?: KnownOutcome): Promise<Operation> {
    const outcome = view.status.name === 'COMPLETED' ? (known ? known.value : await this.call(() => handle.result())) : undefined;
    const operation = toOperation(view, outcome, await this.contextFor(view));
    this.cache.remember(view.workflowId, claimFromMemo(view.memo), operation);
    return operation;
  }

  /** The resource context, with the namespace retention once the execution closed (for keyExpiresAt). */
  private async contextFor(view: ExecutionView): Promise<ResourceContext> {
    return view.closeTime ? this.closedContext() : this.ctx;
  }

  /** The context of a finished operation: with the namespace retention (cached), for keyExpiresAt. */
  private async closedContext(): Promise<ResourceContext> {
    const { client, namespace } = this.deps;
    return { ...this.ctx, retentionMs: await this.retention.get(() => this.call(() => describeRetention(client, namespace))) };
  }

  /** A finished operation with a webhook says how its delivery went: one call, until that is final. */
  private async withNotification(ref: OperationRef, operation: Operation): Promise<Operation> {
    if (!operation.notification || !isTerminal(operation)) return operation;
    return { ...operation, notification: await this.notifications.read(ref) };
  }

  /** Whether a replay of this key would be answered from memory, without the engine. */
  answersFromCache(ref: OperationRef): boolean {
    return this.cache.get(ref.workflowId) !== undefined;
  }

  async get(ref: OperationRef): Promise<Operation> {
    const cached = this.cache.get(ref.workflowId);
    if (cached) {
      this.deps.metrics.cacheHits.inc();
      return this.withNotification(ref, cached.operation);
    }
    try {
      return await this.withNotification(ref, await this.read(this.deps.client.workflow.getHandle(ref.workflowId)));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw problems.operationNotFound();
      throw err;
    }
  }

  /**
   * Asks Temporal to cancel a running operation (its saga stops at the next step boundary and
   * compensates); answers the operation as it is, with `cancelRequested`. A finished one is
   * not changed (409); an unknown key, or another tenant's, is not found.
   */
  async cancel(ref: OperationRef): Promise<Operation> {
    const { client, namespace, metrics, now } = this.deps;
    const count = (result: 'requested' | 'repeated' | 'already_completed' | 'not_found') => metrics.cancellations.inc({ result });
    const cached = this.cache.get(ref.workflowId);
    if (cached) {
      count('already_completed');
      throw problems.operationAlreadyCompleted(cached.operation.status);
    }
    const handle = client.workflow.getHandle(ref.workflowId);
    const finished = async (): Promise<never> => {
      // Read (and cached) so later answers need no call; the 409 names how it ended.
      const operation = await this.get(ref);
      count('already_completed');
      throw problems.operationAlreadyCompleted(operation.status);
    };
    let description;
    try {
      description = await this.call(() => handle.describe());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      count('not_found');
      throw problems.operationNotFound();
    }
    if (description.status.name !== 'RUNNING' && description.status.name !== 'PAUSED') return finished();
    // Temporal ignores a second request anyway; a repeat costs no call.
    const repeated = description.raw.workflowExtendedInfo?.cancelRequested === true;
    if (!repeated) {
      try {
        await this.call(() =>
          client.workflowService.requestCancelWorkflowExecution({
            namespace,
            workflowExecution: { workflowId: ref.workflowId },
            requestId: randomUUID(),
            // Shown in the Temporal UI's history; the saga shows the reason in its current details.
            identity: `retrysafe API, tenant ${ref.tenant}`,
            reason: `by tenant ${ref.tenant} through the API at ${now().toISOString()}`,
          }),
        );
      } catch (err) {
        // It ended between the read and the request.
        if (grpcCode(err) === GrpcCode.NOT_FOUND) return finished();
        throw err;
      }
      // Temporal answers a cancel of an execution that already closed with success and
      // records nothing, so a second read tells a cancel that took from one too late: an
      // execution that closed since ended without it unless its outcome says it saw it.
      const after = await this.get(ref);
      if (isTerminal(after) && !after.cancelRequested) {
        count('already_completed');
        throw problems.operationAlreadyCompleted(after.status);
      }
    }
    count(repeated ? 'repeated' : 'requested');
    const operation = await this.resource(handle, description);
    return { ...operation, cancelRequested: true };
  }

  /** One page of the tenant's operations from the visibility store. */
  async list(tenant: string, request: ListRequest): Promise<{ operations: Operation[]; nextCursor: string | null }> {
    const { client, namespace } = this.deps;
    const query = visibilityQuery(tenant, request);
    const pageToken = request.cursor !== undefined ? decodeCursor(request.cursor, query) : undefined;
    if (pageToken === null) {
      throw problems.invalidRequest('the cursor is not valid for this query', [
        { field: 'cursor', message: 'is not the nextCursor of a previous page of this query' },
      ]);
    }
    const page = await listPage(client, namespace, this.call, { query, pageSize: request.limit, pageToken });
    const operations: Operation[] = [];
    // A webhook's state would cost a call per row: a list leaves it out, as it leaves out result and error.
    const row = ({ notification: _notification, ...operation }: Operation): Operation => operation;
    for (const execution of page.executions) {
      const cached = this.cache.get(execution.workflowId);
      if (cached) {
        operations.push(row(cached.operation));
        continue;
      }
      let operation = toOperation(execution, undefined, await this.contextFor(execution));
      // The engine reports an execution that cannot make progress on its row; the GET of the key says why.
      if (execution.status.name === 'RUNNING' && execution.problem !== undefined) {
        operation = {
          ...operation,
          needsAttention: true,
          attentionReason: `its workflow tasks keep failing: ${execution.problem}`,
        };
      }
      // Completed, but the search attribute was not updated: only the return value can tell.
      if (execution.status.name === 'COMPLETED' && !isTerminal(operation)) {
        operation = await this.resource(client.workflow.getHandle(execution.workflowId, execution.runId), execution);
      }
      operations.push(row(operation));
    }
    return {
      operations,
      nextCursor: page.nextPageToken.length > 0 ? encodeCursor(page.nextPageToken, query) : null,
    };
  }

  /** Open operations (every tenant's) whose workflow tasks keep failing, as the engine reports them. */
  async countStuck(): Promise<number> {
    const { count } = await this.call(() => this.deps.client.workflow.count(STUCK_QUERY));
    return count;
  }

  /** Ends every pending wait (their requests answer 202 with the operation still running). */
  close(): void {
    this.waits.close();
  }

  /** Answers whether Temporal responds, within `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    try {
      await this.call(() => this.deps.client.workflowService.getSystemInfo({}), timeoutMs);
      return true;
    } catch (err) {
      this.deps.logger.warn({ err }, 'temporal is not reachable');
      return false;
    }
  }
}
