// The saga every operation runs through; interpreter.ts walks a definition's steps with it:
//
//   try {
//     return await saga.forward(async () => {
//       for (const step of program.steps) await saga.step(step);
//       return saga.succeed(result);
//     });
//   } catch (err) {
//     return saga.fail(err);
//   }
//
// step() registers the step's compensation *before* the step runs (a step that timed out
// may still have taken effect), hands the call its target (the downstream key, derived
// from the operation and the step's key suffix here and nowhere else) and keeps the books:
// progress in memo, search attributes and current details, the activity summary naming the
// key, metrics. A refusal the step lists as a business error means the step took no effect,
// so its own compensation is dropped; any other failure means its outcome is still unknown
// at its deadline, so it is fenced by its own compensation. fail() then runs the registered
// compensations in reverse, in a non-cancellable scope, each retried until it succeeds; one
// still failing after attentionAfterMs raises NeedsAttention and keeps going: a compensation
// is never dropped. Each compensation's answer says whether its step had taken effect
// (undone) or not (a tombstone), and the outcome says which.
//
// A cancel request (Temporal's own) is honoured at every step boundary, the end of the last
// step included: the forward steps run shielded (forward()), so a call in flight is never
// cut off mid-call, and once it returns no further step starts; the saga then fails with
// code `cancelled` through the same path, compensating what was registered. A cancel the
// API answered 202 therefore always ends cancelled: Temporal refuses to close a workflow
// while a cancel request it has not yet seen is pending, so a run that finished its last
// step meanwhile sees it first.
// A tenant with a completion webhook gets its notification workflow started with the saga
// (notification.ts); the saga waits for that start before it returns.
//
// Every promise workflow code creates costs the SDK a stack capture (for its stack trace
// query), and so does every `await`: the forward path keeps to one shield for all the
// steps and to one promise per layer.
import { CancellationScope, condition, patched, sleep } from '@temporalio/workflow';
import { activitiesWith, retriedUntilDeadline, retriedUntilDone, runStep, type SagaActivities } from './activity-options.js';
import { CancelWatch } from './cancellation.js';
import {
  CANCELLED_CODE,
  DEFINITION_REFUSED_CODE,
  type CompensationName,
  type DownstreamTarget,
  type OperationOutcome,
  type OperationSettings,
  type StepName,
  type TraceCarrier,
} from './contracts.js';
import { failureMessage, programRefusal, refusalCode } from './failures.js';
import { downstreamKey, type OperationRef } from './identity.js';
import { markdownCode } from './markdown.js';
import { SERVICE_ACTIVITY } from './legacy.js';
import { sagaMetrics } from './metrics.js';
import { startNotification } from './notification.js';
import { fieldsOf, programNeeds, type OperationProgram, type ProgramStep, type StepCall } from './program.js';
import { Progress } from './progress.js';

/** Patch ID of the step path with a local first attempt and lighter bookkeeping. */
const LOCAL_FIRST_STEPS = 'local-first-steps';
/**
 * Patch ID of a cancel honoured at the end of the last step too, and of an operation that
 * saw a cancel always ending `cancelled`. Operations that ran before keep the outcome their
 * history records.
 */
const CANCEL_AT_EVERY_BOUNDARY = 'cancel-at-every-boundary';

/** Back-off between workflow-level re-runs of a compensation whose activity gave up. */
const RERUN_BACKOFF_MS = [1_000, 5_000, 30_000, 60_000];

type Step = ProgramStep;

/** How the saga runs its program. */
export interface SagaOptions {
  /**
   * An operation started before operations carried their program: it replays the commands
   * its history recorded (patches as they were taken, declared calls as `callService`).
   */
  legacy: boolean;
  trace?: TraceCarrier;
}

interface Compensation {
  name: CompensationName;
  /** The step it undoes; it acts on that step's key. */
  step: Step;
  target: DownstreamTarget;
}

/** What a compensation found: the step had taken effect and it is undone, or it had not (a tombstone now refuses it). */
type Reconciled = 'undone' | 'fenced';

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
    private readonly program: OperationProgram,
    private readonly operation: OperationRef,
    private readonly request: Readonly<Record<string, unknown>>,
    private readonly settings: OperationSettings,
    private readonly options: SagaOptions,
  ) {
    const steps = this.plan.map((step) => ({
      name: step.name,
      status: 'pending' as const,
      downstreamKey: this.targetOf(step).downstreamKey,
    }));
    this.progress = new Progress(program.type, operation, steps, program.version || undefined);
    this.cancel = new CancelWatch((reason) =>
      this.progress.describe(
        `**cancel requested**${reason ? ` ${reason}` : ''} · noticed ${new Date().toISOString()}: ` +
          'the step in flight finishes, no new step starts, then the registered compensations run',
      ),
    );
    this.notified = settings.notify ? startNotification(operation, settings.notify, options.trace) : undefined;
  }

  private get plan(): readonly Step[] {
    return this.program.steps;
  }

  /**
   * Whether the patch is taken. A legacy operation asks, so its history replays with the
   * markers it recorded; a program run started after every patch of its day and takes them
   * all without a marker each (its later changes are patched from its own start on).
   */
  private patch(id: string): boolean {
    return this.options.legacy ? patched(id) : true;
  }

  /**
   * Runs the forward steps: shielded, once for all of them, so a cancel never cuts a
   * downstream call off (its outcome, or its fence, decides); step() honours it at the
   * boundaries instead.
   */
  forward<T>(steps: () => Promise<T>): Promise<T> {
    return CancellationScope.nonCancellable(steps);
  }

  /**
   * A program the worker refused before any step ran (malformed, or needing what no worker
   * here has): no step runs, nothing needs undoing, and the operation needs an operator.
   */
  refuse(reason: string): Promise<OperationOutcome> {
    this.raiseAttention(reason);
    return this.fail(new StepFailure(DEFINITION_REFUSED_CODE, reason));
  }

  /** Runs one forward step (within forward()); its compensation is registered before it runs. */
  step(step: Step): Promise<Record<string, unknown>> {
    if (this.cancel.requested) return Promise.reject(this.cancelledBefore(step));
    const target = this.targetOf(step);
    if (step.compensation) {
      this.compensations.push({ name: step.compensation.name, step, target: { ...target, step: step.compensation.name } });
    }
    // The first call checks, before it is made, that this worker can run the whole program.
    if (!this.options.legacy && step === this.plan[0]) target.needs = programNeeds(this.program);
    // Operations started before steps ran local-first replay their history as it was
    // written (every attempt a regular activity, progress published at each step start).
    const localFirst = this.patch(LOCAL_FIRST_STEPS);
    this.progress.start(step.name, { publishStatus: !localFirst });
    const summary = summaryOf(step.name, step, target);
    const call = (activities: SagaActivities) => this.callOf(step.call, step.name, activities, { target, service: step.service });
    const answered = localFirst
      ? runStep(this.settings, summary, call)
      : call(activitiesWith(retriedUntilDeadline(this.settings.stepDeadlineMs), summary));
    return answered.then(
      (answer) => this.completed(step, answer),
      (err: unknown) => {
        throw this.classify(step, err);
      },
    );
  }

  private completed(step: Step, answer: unknown): Record<string, unknown> {
    this.progress.mark(step.name, 'completed', describeAnswer(answer));
    // The end of a step is a boundary too, the last one's included.
    if (this.cancel.requested && this.patch(CANCEL_AT_EVERY_BOUNDARY)) throw this.cancelledAfter(step);
    return isRecord(answer) ? answer : {};
  }

  async succeed(result: Record<string, string>): Promise<OperationOutcome> {
    const outcome = this.progress.succeed(result);
    if (this.notified) await this.notified;
    // Seen only while the notification workflow was starting: the steps are done, so undone.
    if (this.cancel.requested && this.patch(CANCEL_AT_EVERY_BOUNDARY)) return this.fail(this.cancelledAfter(this.plan.at(-1)!));
    return this.finish(outcome);
  }

  /** The one failure path: compensates what was registered and reports the step's error. */
  async fail(err: unknown): Promise<OperationOutcome> {
    // Anything else is a bug in the saga, not an outcome: rethrown, it fails the workflow
    // task, which Temporal retries until a fixed worker runs it, instead of ending the operation.
    if (!(err instanceof StepFailure)) throw err;
    const ran = await this.compensate();
    const compensations = ran.map((c) => c.name);
    if (ran.length > 0) this.progress.describe(`compensations ran: ${ran.map(describeCompensation).join('; ')}`);
    const { code, message } = this.cancelledOver(err);
    const described = ran.length > 0 ? `${message}; ${ran.map(describeCompensation).join('; ')}` : message;
    return this.finish(this.progress.fail({ code, message: described, compensations }));
  }

  /** The outcome, once the notification workflow (if any) has started: closing earlier would lose it. */
  private async finish(outcome: OperationOutcome): Promise<OperationOutcome> {
    if (this.notified) await this.notified;
    // Again for a cancel that arrived during that wait (an operation refused in its first
    // workflow task stays open until the child has started).
    if (outcome.status === 'failed') outcome = { ...outcome, error: { ...outcome.error, ...this.cancelledOver(outcome.error) } };
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
  private cancelledBefore(step: Step): StepFailure {
    this.fenceSteps(this.stepsFrom(step), 'fenced by the cancel: a local attempt may have run unrecorded');
    // "Recorded", not "started": a lost local attempt may have run it (the compensations say).
    return new StepFailure(
      CANCELLED_CODE,
      `the operation was cancelled before any outcome of ${step.name} was recorded (${this.cancelWords()})`,
    );
  }

  /** A cancel seen as `step` returned: it and the steps before it are undone, the ones after it fenced. */
  private cancelledAfter(step: Step): StepFailure {
    const later = this.stepsFrom(step).slice(1);
    this.fenceSteps(later, 'fenced by the cancel: a local attempt may have run unrecorded');
    const next = later[0];
    return new StepFailure(
      CANCELLED_CODE,
      `the operation was cancelled after ${step.name}${next ? `, before any outcome of ${next.name} was recorded` : ', its last step'} (${this.cancelWords()})`,
    );
  }

  /**
   * A cancel the API accepted ends cancelled, whatever else stopped the saga meanwhile: the
   * error as it ends, the other cause kept in the message. Only the outcome differs, not the
   * commands: no patch needed.
   */
  private cancelledOver({ code, message }: { code: string; message: string }): { code: string; message: string } {
    if (code === CANCELLED_CODE || !this.cancel.requested) return { code, message };
    return { code: CANCELLED_CODE, message: `${this.cancelWords()}; before it took hold: ${code} (${message})` };
  }

  private cancelWords(): string {
    return this.cancel.reason ? `cancel requested ${this.cancel.reason}` : 'a cancel was requested';
  }

  /**
   * Local first attempts run inside a workflow task, and their results are recorded only
   * when that task completes. A task that is lost (its worker died) or whose completion
   * Temporal refuses (a cancel arrived meanwhile) is run again from history, without those
   * results: the steps are made again with the same keys, and the downstream answers as
   * before, unless the run now takes another path — a cancel seen first, or a step that had
   * succeeded and now cannot be reached until its deadline. Then steps the lost task made
   * are behind the saga's back. So on those two paths every step from there on that has a
   * compensation is fenced by it (keyed: one that never ran leaves a tombstone that refuses
   * it, should it arrive late), and the compensations run in reverse like any other; each
   * one's answer tells which of those steps had in fact run. A business refusal needs none
   * of this: the downstream stored it under the key, so the lost task got the same answer
   * and went no further.
   */
  private fenceSteps(steps: readonly Step[], why: string): void {
    if (!this.patch(LOCAL_FIRST_STEPS)) return;
    for (const step of steps) {
      if (!step.compensation) continue;
      this.compensations.push({
        name: step.compensation.name,
        step,
        target: { ...this.targetOf(step), step: step.compensation.name },
      });
      this.progress.mark(step.name, 'fenced', why);
    }
  }

  /** The plan's steps from `step` on. */
  private stepsFrom(step: Step): readonly Step[] {
    return this.plan.slice(this.plan.indexOf(step));
  }

  private targetOf(step: Step): DownstreamTarget {
    return {
      operation: this.operation,
      downstreamKey: downstreamKey(this.operation.workflowId, step.keySuffix),
      step: step.name,
      ...(this.options.trace ? { trace: this.options.trace } : {}),
    };
  }

  private classify(step: Step, err: unknown): StepFailure {
    const answer = failureMessage(err);
    // Refused by the worker before the call was made: the step did not run, its own
    // compensation goes, the earlier ones run, and an operator must give the worker what it lacks.
    if (programRefusal(err)) {
      this.progress.mark(step.name, 'failed', answer);
      if (step.compensation) this.compensations.pop();
      this.raiseAttention(answer);
      return new StepFailure(DEFINITION_REFUSED_CODE, answer);
    }
    const refused = refusalCode(err);
    const business =
      refused !== undefined && Object.hasOwn(step.businessErrors, refused) ? step.businessErrors[refused] : undefined;
    if (business !== undefined) {
      this.progress.mark(step.name, 'failed', `${business} (${answer})`);
      // A refused step took no effect: its own compensation, pushed just before it ran, goes.
      if (step.compensation) this.compensations.pop();
      return new StepFailure(business, answer);
    }
    this.progress.mark(step.name, 'fenced', `outcome unknown at the deadline (${answer})`);
    sagaMetrics.fenced(step.name);
    this.fenceSteps(this.stepsFrom(step).slice(1), `fenced after ${step.name}: a lost local attempt may have run it`);
    return new StepFailure(
      step.unavailableCode ?? this.program.unavailableCode,
      `the outcome of ${step.name} could not be reconciled before its deadline (${answer}); it was fenced and compensated`,
    );
  }

  /** Runs every registered compensation in reverse order; returns them in that order with what each found. */
  private async compensate(): Promise<Array<{ name: CompensationName; step: StepName; found: Reconciled }>> {
    return CancellationScope.nonCancellable(async () => {
      const ran: Array<{ name: CompensationName; step: StepName; found: Reconciled }> = [];
      for (let next = this.compensations.pop(); next; next = this.compensations.pop()) {
        const found = reconciled(await this.runUntilDone(next));
        sagaMetrics.compensated(next.name);
        this.progress.compensated(next.step.name, found === 'fenced' ? 'fenced' : 'compensated');
        ran.push({ name: next.name, step: next.step.name, found });
      }
      return ran;
    });
  }

  private async runUntilDone({ name, step, target }: Compensation): Promise<unknown> {
    const compensation = step.compensation!;
    const activities = activitiesWith(retriedUntilDone, summaryOf(name, step, target));
    let done = false;
    const attempt = async (): Promise<unknown> => {
      for (let rerun = 0; ; rerun++) {
        try {
          return await this.callOf(compensation.call, name, activities, { target, service: step.service, undo: true });
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
    if (!finishedInTime) this.raiseAttention(`a compensation keeps failing: ${name} (still retrying)`);
    return running;
  }

  /** NeedsAttention, once per operation: the first reason is the one an operator reads. */
  private raiseAttention(reason: string): void {
    if (this.attentionRaised) return;
    this.attentionRaised = true;
    this.progress.needsAttention(reason);
  }

  /**
   * Makes a step's or compensation's call: a hand-written activity by its name, with the
   * input its field map builds; a declared HTTP call as an activity of its own type, the
   * step's or compensation's name (so the engine's replay check and the Web UI's timeline
   * tell one step from another), with the method, path and body it declares.
   */
  private callOf(
    call: StepCall,
    name: string,
    activities: SagaActivities,
    how: { target: DownstreamTarget; service: string; undo?: true },
  ): Promise<unknown> {
    const { target, service, undo } = how;
    const { settings } = this.program;
    if (call.kind === 'activity') {
      const activity = activities[call.activity]!;
      return call.input === undefined ? activity(target) : activity(target, fieldsOf(call.input, this.request, settings));
    }
    return activities[this.options.legacy ? SERVICE_ACTIVITY : name]!(target, {
      service,
      method: call.method,
      path: call.path,
      ...(call.body ? { body: fieldsOf(call.body, this.request, settings) } : {}),
      ...(undo ? { undo } : {}),
    });
  }
}

/**
 * ``charge_payment · bank key `acme/order-42/charge` ``: how the Temporal UI names the call
 * (markdown there: the key, tenant text, in a code span).
 */
function summaryOf(name: StepName | CompensationName, step: Step, target: DownstreamTarget): string {
  return `${name} · ${step.service} key ${markdownCode(target.downstreamKey)}`;
}

/** A compensation's answer `status: "fenced"` says its step had not taken effect: a tombstone now refuses it. */
function reconciled(answer: unknown): Reconciled {
  return isRecord(answer) && answer.status === 'fenced' ? 'fenced' : 'undone';
}

/** `release_reservation undid reserve_items`, or the tombstone a compensation left for a step that never took effect. */
function describeCompensation({ name, step, found }: { name: CompensationName; step: StepName; found: Reconciled }): string {
  return found === 'undone'
    ? `${name} undid ${step}`
    : `${name} fenced ${step}, which had not taken effect (a tombstone refuses it for good)`;
}

/** The downstream's answer in one line for the UI: `chargeId ch_1`, `status confirmed, reservationId res_1`. */
function describeAnswer(result: unknown): string | undefined {
  if (!isRecord(result)) return undefined;
  const fields = Object.entries(result).filter(([, v]) => typeof v === 'string' || typeof v === 'number');
  return fields.map(([k, v]) => `${k} ${String(v)}`).join(', ') || undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
