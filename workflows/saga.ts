// The saga every operation runs through, so that each saga file reads as its flow:
//
//   try {
//     await saga.step('reserve_items', { undo: 'release_reservation' }, (call, target) => call.reserveItems(target, hold));
//     await saga.step('charge_payment', { undo: 'reverse_charge' }, (call, target) => call.chargePayment(target, charge));
//     return saga.succeed(result);
//   } catch (err) {
//     return saga.fail(err);
//   }
//
// step() registers the step's compensation *before* the step runs (a step that timed out
// may still have taken effect), hands the call its target (the downstream key, derived
// from the operation here and nowhere else) and keeps the books: progress in memo, search
// attributes and current details, the activity summary naming the key, metrics. A
// business error means the step took no effect, so its own compensation is dropped; any
// other failure means its outcome is still unknown at its deadline, so it is fenced by
// its own compensation. fail() then runs the registered compensations in reverse, in a
// non-cancellable scope, each retried until it succeeds; one still failing after
// attentionAfterMs raises NeedsAttention and keeps going: a compensation is never dropped.
//
// A cancel request (Temporal's own) is honoured at step boundaries: step() shields the call
// in flight, so it is never cut off mid-call, and refuses to start the next step; the saga
// then fails with code `cancelled` through the same path, compensating what was registered.
// A tenant with a completion webhook gets its notification workflow started with the saga
// (notification.ts); the saga waits for that start before it returns.
import { ApplicationFailure, CancellationScope, condition, patched, sleep } from '@temporalio/workflow';
import {
  activitiesWith,
  activityCause,
  retriedUntilDeadline,
  retriedUntilDone,
  runStep,
  type SagaActivities,
} from './activity-options.js';
import { CancelWatch } from './cancellation.js';
import {
  BUSINESS_ERRORS,
  CANCELLED_CODE,
  OPERATION_STEPS,
  UNAVAILABLE_CODE,
  type BusinessErrorType,
  type CompensationName,
  type DownstreamTarget,
  type OperationOutcome,
  type OperationSettings,
  type OperationType,
  type StepName,
} from './contracts.js';
import { downstreamKey, type OperationRef } from './identity.js';
import { sagaMetrics } from './metrics.js';
import { startNotification } from './notification.js';
import { Progress } from './progress.js';

/** Patch ID of the step path with a local first attempt and lighter bookkeeping. */
const LOCAL_FIRST_STEPS = 'local-first-steps';

/** A step's downstream call: the activities to make it with (see runStep), and its target. */
export type StepCall<T> = (call: SagaActivities, target: DownstreamTarget) => Promise<T>;

/** The activity each compensation runs, on the key of the step it undoes. */
const UNDO: Record<CompensationName, StepCall<unknown>> = {
  release_reservation: (call, target) => call.releaseReservation(target),
  reverse_charge: (call, target) => call.reverseCharge(target),
};

/**
 * The compensation that undoes (or fences) each step, as the flows register it. A cancel
 * fences the steps it stops before with these: see cancelledBefore.
 */
const FENCE: Partial<Record<StepName, CompensationName>> = {
  reserve_items: 'release_reservation',
  charge_payment: 'reverse_charge',
};

/** The service each call speaks to, named in its summary in the Temporal UI. */
const SERVICE: Record<StepName | CompensationName, string> = {
  reserve_items: 'reservations',
  confirm_reservation: 'reservations',
  release_reservation: 'reservations',
  charge_payment: 'bank',
  reverse_charge: 'bank',
};

/** Back-off between workflow-level re-runs of a compensation whose activity gave up. */
const RERUN_BACKOFF_MS = [1_000, 5_000, 30_000, 60_000];

interface Compensation {
  name: CompensationName;
  /** The step it undoes; it acts on that step's key. */
  step: StepName;
  target: DownstreamTarget;
}

/** A step that did not succeed, classified where it failed: the operation's error. */
class StepFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class Saga {
  private readonly progress: Progress;
  private readonly compensations: Compensation[] = [];
  private attentionRaised = false;
  private readonly cancel: CancelWatch;
  /** Resolves once the notification workflow started; undefined without a webhook. */
  private readonly notified: Promise<void> | undefined;

  constructor(
    private readonly type: OperationType,
    private readonly operation: OperationRef,
    private readonly settings: OperationSettings,
  ) {
    const steps = OPERATION_STEPS[type].map((name) => ({
      name,
      status: 'pending' as const,
      downstreamKey: this.targetOf(name).downstreamKey,
    }));
    this.progress = new Progress(type, operation, steps);
    this.cancel = new CancelWatch((reason) =>
      this.progress.describe(
        `**cancel requested**${reason ? ` ${reason}` : ''} · noticed ${new Date().toISOString()}: ` +
          'the step in flight finishes, no new step starts, then the registered compensations run',
      ),
    );
    this.notified = settings.notify ? startNotification(operation, settings.notify) : undefined;
  }

  /** Runs one forward step; `undo` is registered before it runs. */
  async step<T>(name: StepName, { undo }: { undo?: CompensationName }, call: StepCall<T>): Promise<T> {
    if (undo !== FENCE[name]) throw new Error(`${name} must register ${FENCE[name] ?? 'no compensation'}`);
    if (this.cancel.requested) throw this.cancelledBefore(name);
    const target = this.targetOf(name);
    if (undo) this.compensations.push({ name: undo, step: name, target });
    // Operations started before steps ran local-first replay their history as it was
    // written (every attempt a regular activity, progress published at each step start).
    const localFirst = patched(LOCAL_FIRST_STEPS);
    this.progress.start(name, { publishStatus: !localFirst });
    try {
      // Shielded: a cancel must not cut a downstream call off; its outcome (or its fence) decides.
      const result = await CancellationScope.nonCancellable(() =>
        localFirst
          ? runStep(this.settings, summary(name, target), (activities) => call(activities, target))
          : call(activitiesWith(retriedUntilDeadline(this.settings.stepDeadlineMs), summary(name, target)), target),
      );
      this.progress.mark(name, 'completed', describeAnswer(result));
      return result;
    } catch (err) {
      throw this.classify(name, undo, err);
    }
  }

  async succeed(result: Record<string, string>): Promise<OperationOutcome> {
    return this.finish(this.progress.succeed(result));
  }

  /** The one failure path: compensates what was registered and reports the step's error. */
  async fail(err: unknown): Promise<OperationOutcome> {
    // Anything else is a bug in the saga, not an outcome: rethrown, it fails the workflow
    // task, which Temporal retries until a fixed worker runs it, instead of ending the operation.
    if (!(err instanceof StepFailure)) throw err;
    const compensations = await this.compensate();
    if (compensations.length > 0) this.progress.describe(`compensations ran: ${compensations.join(', ')}`);
    return this.finish(this.progress.fail({ code: err.code, message: err.message, compensations }));
  }

  /** The outcome, once the notification workflow (if any) has started: closing earlier would lose it. */
  private async finish(outcome: OperationOutcome): Promise<OperationOutcome> {
    await this.notified;
    return {
      ...outcome,
      ...(this.settings.notify ? { notify: true as const } : {}),
      ...(this.cancel.requested ? { cancelRequested: true as const } : {}),
    };
  }

  /**
   * A cancel stops the saga before `step`. With local first attempts that does not prove
   * `step` and the ones after it never ran: see fenceSteps.
   */
  private cancelledBefore(step: StepName): StepFailure {
    this.fenceSteps(this.stepsFrom(step), 'fenced by the cancel: a local attempt may have run unrecorded');
    const why = this.cancel.reason ? `cancel requested ${this.cancel.reason}` : 'a cancel was requested';
    return new StepFailure(CANCELLED_CODE, `the operation was cancelled before ${step} started (${why})`);
  }

  /**
   * Local first attempts run inside a workflow task, and their results are recorded only
   * when that task completes. A task that is lost (its worker died) or whose completion
   * Temporal refuses (it closed the workflow as a cancel arrived) is run again from
   * history, without those results: the steps are made again with the same keys, and the
   * downstream answers as before, unless the run now takes another path — a cancel seen
   * first, or a step that had succeeded and now cannot be reached until its deadline. Then
   * steps the lost task made are behind the saga's back. So on those two paths every step
   * from there on that has a compensation is fenced by it (keyed: one that never ran leaves
   * a tombstone that refuses it, should it arrive late), and the compensations run in
   * reverse like any other. A business refusal needs none of this: the downstream stored
   * it under the key, so the lost task got the same answer and went no further.
   */
  private fenceSteps(steps: readonly StepName[], why: string): void {
    if (!patched(LOCAL_FIRST_STEPS)) return;
    for (const name of steps) {
      const undo = FENCE[name];
      if (!undo) continue;
      this.compensations.push({ name: undo, step: name, target: this.targetOf(name) });
      this.progress.mark(name, 'fenced', why);
    }
  }

  /** The plan's steps from `step` on. */
  private stepsFrom(step: StepName): readonly StepName[] {
    const plan: readonly StepName[] = OPERATION_STEPS[this.type];
    return plan.slice(plan.indexOf(step));
  }

  private targetOf(step: StepName): DownstreamTarget {
    return { operation: this.operation, downstreamKey: downstreamKey(this.operation.workflowId, step) };
  }

  private classify(step: StepName, undo: CompensationName | undefined, err: unknown): StepFailure {
    const cause = activityCause(err);
    const answer = cause instanceof Error ? cause.message : String(cause);
    const code = businessCode(err);
    if (code) {
      this.progress.mark(step, 'failed', `${code} (${answer})`);
      // A refused step took no effect: its own compensation, pushed just before it ran, goes.
      if (undo) this.compensations.pop();
      return new StepFailure(code, answer);
    }
    this.progress.mark(step, 'fenced', `outcome unknown at the deadline (${answer})`);
    sagaMetrics.fenced(step);
    this.fenceSteps(this.stepsFrom(step).slice(1), `fenced after ${step}: a lost local attempt may have run it`);
    return new StepFailure(
      UNAVAILABLE_CODE[step],
      `the outcome of ${step} could not be reconciled before its deadline (${answer}); it was fenced and compensated`,
    );
  }

  /** Runs every registered compensation in reverse order; returns their names in that order. */
  private async compensate(): Promise<CompensationName[]> {
    return CancellationScope.nonCancellable(async () => {
      const ran: CompensationName[] = [];
      for (let next = this.compensations.pop(); next; next = this.compensations.pop()) {
        await this.runUntilDone(next);
        sagaMetrics.compensated(next.name);
        this.progress.compensated(next.step);
        ran.push(next.name);
      }
      return ran;
    });
  }

  private async runUntilDone({ name, target }: Compensation): Promise<void> {
    const call = activitiesWith(retriedUntilDone, summary(name, target));
    let done = false;
    const attempt = async (): Promise<void> => {
      for (let rerun = 0; ; rerun++) {
        try {
          await UNDO[name](call, target);
          return;
        } catch {
          // The activity's own retry policy has no attempt limit, so this only happens if
          // the activity failed non-retryably; run it again rather than drop it.
          await sleep(RERUN_BACKOFF_MS[Math.min(rerun, RERUN_BACKOFF_MS.length - 1)]!);
        }
      }
    };
    const running = attempt().finally(() => {
      done = true;
    });
    const finishedInTime = await condition(() => done, this.settings.attentionAfterMs);
    if (!finishedInTime && !this.attentionRaised) {
      this.attentionRaised = true;
      this.progress.needsAttention();
    }
    await running;
  }
}

/** `charge_payment · bank key acme/order-42/charge`: how the Temporal UI names the call. */
function summary(name: StepName | CompensationName, target: DownstreamTarget): string {
  return `${name} · ${SERVICE[name]} key ${target.downstreamKey}`;
}

/** The code of a business refusal (the step took no effect), or undefined. */
function businessCode(err: unknown): string | undefined {
  const cause = activityCause(err);
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const type = cause.type;
  return type && Object.hasOwn(BUSINESS_ERRORS, type) ? BUSINESS_ERRORS[type as BusinessErrorType] : undefined;
}

/** The downstream's answer in one line for the UI: `chargeId ch_1`, `status confirmed, reservationId res_1`. */
function describeAnswer(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const fields = Object.entries(result).filter(([, v]) => typeof v === 'string' || typeof v === 'number');
  return fields.map(([k, v]) => `${k} ${String(v)}`).join(', ') || undefined;
}
