// Keeps an operation's progress where readers can see it without a worker: the memo
// (step list with downstream keys, current step, attention flag) and the search
// attributes the Temporal UI filters on. It records the steps (and their keys) it is
// handed, and derives nothing.
//
// Bookkeeping is history: every memo or search-attribute upsert is an event. Steps run as
// local activities, so a whole operation usually runs in one workflow task and only what
// that task ends with is ever seen. Hence one memo upsert when a step starts (seen by a
// status read when the step outlasts the workflow task and the worker records its
// progress so far: a slow or retrying step, the one a reader asks about) and, once the
// outcome is known, the final memo and one search-attribute upsert (OperationStatus and
// OperationStep, which the list and the Web UI filter on). OperationStatus is
// `processing` from the start (the API sets it) until then.
import { log, setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  SearchAttributes,
  type OperationError,
  type OperationOutcome,
  type OperationStatus,
  type OperationType,
  type OutcomeFacts,
  type StepName,
  type StepState,
  type StepStatus,
} from './contracts.js';
import type { OperationRef } from './identity.js';
import { markdownCode } from './markdown.js';
import { sagaMetrics } from './metrics.js';

export class Progress {
  private current: StepName | null = null;
  private attention: string | undefined;
  private readonly lines: string[] = [];
  private readonly logMeta: Record<string, string>;

  constructor(
    private readonly type: OperationType,
    private readonly operation: OperationRef,
    private readonly steps: StepState[],
    /** The definition's version, when the operation carries its definition. */
    private readonly version?: string,
  ) {
    this.logMeta = { tenant: operation.tenant, key: operation.key, type };
  }

  /** `publishStatus`: also upsert the search attributes (only operations started before this was dropped). */
  start(step: StepName, { publishStatus }: { publishStatus: boolean }): void {
    const state = this.find(step);
    this.current = step;
    // No log line here: a workflow's log line is a sink call that carries the whole workflow
    // info to the worker's main thread; the activity logs each call with its key and answer.
    state.status = 'running';
    if (publishStatus) this.publish('processing');
    else upsertMemo({ step, steps: this.snapshot() });
    this.describe(`**${step}** running · downstream key ${markdownCode(state.downstreamKey)}`);
  }

  /**
   * Marks a step without publishing; the next start() or the outcome publishes it.
   * `answer` is the downstream's last word on it, shown in the Temporal UI.
   */
  mark(step: StepName, status: StepStatus, answer?: string): void {
    const state = this.find(step);
    state.status = status;
    this.describe(`**${step}** ${status}${answer ? `: ${answer}` : ''} · downstream key ${markdownCode(state.downstreamKey)}`);
  }

  /**
   * A step whose compensation ran, as its answer told: `compensated` when the step had taken
   * effect (undone), `fenced` when it had not (a tombstone). Set quietly: the compensations
   * get one line.
   */
  compensated(step: StepName, status: 'compensated' | 'fenced'): void {
    this.find(step).status = status;
  }

  /** Current details in the Temporal UI (served by a query: costs no history event). */
  describe(text: string): void {
    this.lines.push(text);
    setCurrentDetails(this.lines.slice(-6).join('\n\n'));
  }

  /** Flags the operation for an operator, with what is wrong (a compensation that keeps failing, a refused definition). */
  needsAttention(reason: string): void {
    this.attention = reason;
    sagaMetrics.needsAttention(this.type);
    log.warn(`operation needs attention: ${reason}`, { ...this.logMeta, step: this.current });
    this.describe(`**needs attention**: ${reason}`);
    upsertMemo({ needsAttention: true, attentionReason: reason });
    upsertSearchAttributes([{ key: SearchAttributes.NeedsAttention, value: true }]);
  }

  succeed(result: Record<string, string>): OperationOutcome {
    this.publish('succeeded');
    sagaMetrics.completed(this.type, 'succeeded');
    log.info('operation succeeded', { ...this.logMeta, step: this.current, ...result });
    return { status: 'succeeded', result, ...this.facts() };
  }

  fail(error: OperationError): OperationOutcome {
    this.publish('failed');
    sagaMetrics.completed(this.type, 'failed', error.code);
    log.info('operation failed', { ...this.logMeta, step: this.current, code: error.code, compensations: error.compensations });
    return { status: 'failed', error, ...this.facts() };
  }

  /** What the API needs besides the result to answer with the operation. */
  private facts(): OutcomeFacts {
    return {
      type: this.type,
      key: this.operation.key,
      // The start time of the execution as recorded in its history, so the same as a description reports.
      createdAt: workflowInfo().startTime.toISOString(),
      step: this.current,
      steps: this.snapshot(),
      needsAttention: this.attention !== undefined,
      ...(this.attention !== undefined ? { attentionReason: this.attention } : {}),
      ...(this.version ? { version: this.version } : {}),
    };
  }

  /** Memo and search attributes together: once the outcome is known. */
  private publish(status: OperationStatus): void {
    upsertMemo({ step: this.current, steps: this.snapshot() });
    upsertSearchAttributes([
      { key: SearchAttributes.OperationStatus, value: status },
      ...(this.current ? [{ key: SearchAttributes.OperationStep, value: this.current }] : []),
    ]);
  }

  private snapshot(): StepState[] {
    return this.steps.map((s) => ({ ...s }));
  }

  private find(step: StepName): StepState {
    const found = this.steps.find((s) => s.name === step);
    if (!found) throw new Error(`unknown step ${step}`);
    return found;
  }
}
