// Keeps an operation's progress where readers can see it without a worker: the memo
// (step list with downstream keys, current step, attention flag) and the search
// attributes the Temporal UI filters on. One memo and one search attribute upsert per
// transition, so the bookkeeping stays a small, fixed share of the history. It records
// the steps (and their keys) it is handed, and derives nothing.
import { log, setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import {
  SearchAttributes,
  type OperationError,
  type OperationOutcome,
  type OperationStatus,
  type OperationType,
  type StepName,
  type StepState,
  type StepStatus,
} from './contracts.js';
import type { OperationRef } from './identity.js';
import { sagaMetrics } from './metrics.js';

export class Progress {
  private current: StepName | null = null;
  private readonly lines: string[] = [];
  private readonly logMeta: Record<string, string>;

  constructor(
    private readonly type: OperationType,
    operation: OperationRef,
    private readonly steps: StepState[],
  ) {
    this.logMeta = { tenant: operation.tenant, key: operation.key, type };
  }

  start(step: StepName): void {
    const state = this.find(step);
    this.current = step;
    log.info('step started', { ...this.logMeta, step, downstreamKey: state.downstreamKey });
    state.status = 'running';
    this.publish('processing');
    this.describe(`**${step}** running · downstream key \`${state.downstreamKey}\``);
  }

  /**
   * Marks a step without publishing; the next start() or the outcome publishes it.
   * `answer` is the downstream's last word on it, shown in the Temporal UI.
   */
  mark(step: StepName, status: StepStatus, answer?: string): void {
    const state = this.find(step);
    state.status = status;
    this.describe(`**${step}** ${status}${answer ? `: ${answer}` : ''} · downstream key \`${state.downstreamKey}\``);
  }

  /** A completed step whose compensation ran (set quietly: the compensations get one line). */
  compensated(step: StepName): void {
    const state = this.find(step);
    if (state.status === 'completed') state.status = 'compensated';
  }

  /** Current details in the Temporal UI (served by a query: costs no history event). */
  describe(text: string): void {
    this.lines.push(text);
    setCurrentDetails(this.lines.slice(-6).join('\n\n'));
  }

  needsAttention(): void {
    sagaMetrics.needsAttention(this.type);
    log.warn('operation needs attention: a compensation keeps failing', { ...this.logMeta, step: this.current });
    this.describe('**needs attention**: a compensation keeps failing; still retrying');
    upsertMemo({ needsAttention: true });
    upsertSearchAttributes([{ key: SearchAttributes.NeedsAttention, value: true }]);
  }

  succeed(result: Record<string, string>): OperationOutcome {
    this.publish('succeeded');
    sagaMetrics.completed(this.type, 'succeeded');
    log.info('operation succeeded', { ...this.logMeta, step: this.current, ...result });
    return { status: 'succeeded', result, steps: this.snapshot() };
  }

  fail(error: OperationError): OperationOutcome {
    this.publish('failed');
    sagaMetrics.completed(this.type, 'failed', error.code);
    log.info('operation failed', { ...this.logMeta, step: this.current, code: error.code, compensations: error.compensations });
    return { status: 'failed', error, steps: this.snapshot() };
  }

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
