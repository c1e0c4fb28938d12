// The one layer every step and compensation activity goes through, declared or hand-written:
//
//   the target holds a downstream key ─▶ (first call of an operation) this worker has every
//   service and activity the operation's program needs ─▶ the call, counted and logged
//
// A recorded program is input, not trust: a worker that lacks what it needs refuses before
// any downstream call (ProgramRefused, final), so an operation refused on its first step
// ran no step at all. The saga fails it `definition_refused` and flags it for an operator.
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { LogEvent } from '../common/log-events.js';
import { PROGRAM_REFUSED, type DownstreamTarget } from '../workflows/contracts.js';
import type { ProgramNeeds } from '../workflows/program.js';
import { DOWNSTREAM_REFUSAL } from './errors.js';
import { requestIdOf } from './http.js';
import { traceCall, type TracedCall } from './tracing.js';

/** Which service a call speaks to, and whether it is a compensation (for its books and its span). */
export interface CallKind {
  service: string;
  undo: boolean;
}

/** A step's or compensation's activity: its target, and the input its program builds (if any). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each activity types its own input
export type StepActivity = (target: DownstreamTarget, input?: any) => Promise<unknown>;

type Result = 'ok' | 'replayed' | 'refused' | 'unavailable';

function resultOf(err: unknown): Result {
  return err instanceof ApplicationFailure && err.type === DOWNSTREAM_REFUSAL ? 'refused' : 'unavailable';
}

/** Final: retrying on this worker cannot help, and no call was made. */
export function programRefused(message: string, missing?: Partial<ProgramNeeds>): ApplicationFailure {
  return ApplicationFailure.create({ type: PROGRAM_REFUSED, message, nonRetryable: true, details: missing ? [missing] : [] });
}

export class StepLayer {
  private readonly services: ReadonlySet<string>;
  private readonly activities: ReadonlySet<string>;

  /** What this worker has: services with a base URL, and the step activities it registers by name. */
  constructor(has: ProgramNeeds) {
    this.services = new Set(has.services);
    this.activities = new Set(has.activities);
  }

  /**
   * `fn` as a step activity: its target checked, the operation's needs checked on its first
   * call, then the call counted, logged and traced as `callOf` describes it.
   */
  step(name: string, callOf: (target: DownstreamTarget, input: unknown) => CallKind, fn: StepActivity): StepActivity {
    return async (target, input) => {
      if (typeof target?.downstreamKey !== 'string' || target.downstreamKey === '' || !target.operation) {
        // Never call a downstream without the key it deduplicates on (an input from an older
        // workflow version, or a bug): failing for good hands the decision back to the saga,
        // which fences a forward step and re-runs a compensation with a well-formed input.
        throw ApplicationFailure.nonRetryable(`${name}: input without a downstream key`, 'InvalidActivityInput');
      }
      const { service, undo } = callOf(target, input);
      if (target.needs) this.checkNeeds(target.needs);
      return this.track({ service, call: name, target, undo }, () => fn(target, input));
    };
  }

  /** Refuses, naming them, the services and activities the program needs that this worker lacks. */
  private checkNeeds(needs: ProgramNeeds): void {
    const services = (needs.services ?? []).filter((s) => !this.services.has(s));
    const activities = (needs.activities ?? []).filter((a) => !this.activities.has(a));
    if (services.length === 0 && activities.length === 0) return;
    const lacks = [
      ...services.map((s) => `no base URL for service ${s} (RETRYSAFE_SERVICES)`),
      ...activities.map((a) => `no activity ${a} (an operations folder's activities.ts)`),
    ];
    const message = `this worker cannot run the operation's definition: it has ${lacks.join('; ')}`;
    log.error(message, { event: LogEvent.programRefused, services, activities });
    throw programRefused(message, { services, activities });
  }

  /**
   * One downstream call of a step or compensation: in its span, counted by service and
   * result (bounded labels, no keys) and logged, within the span so its lines carry it, with
   * the tenant, key, workflow and activity it belongs to.
   */
  private track<T>(traced: TracedCall, make: () => Promise<T>): Promise<T> {
    return traceCall(traced, () => this.counted(traced, make));
  }

  private async counted<T>(traced: TracedCall, make: () => Promise<T>): Promise<T> {
    const { service, call, target } = traced;
    const ctx = Context.current();
    const { tenant, key, workflowId } = target.operation;
    const step = target.step ?? call;
    const meta = { tenant, key, workflowId, step, call, downstreamKey: target.downstreamKey, requestId: requestIdOf(ctx.info) };
    const calls = ctx.metricMeter.createCounter('retrysafe_downstream_calls', 'calls', 'Downstream calls by service and result');
    try {
      const answer = await make();
      const replayed = (answer as { replayed?: boolean } | undefined)?.replayed === true;
      calls.add(1, { service, result: replayed ? 'replayed' : 'ok' });
      log.info(`${step} answered`, { ...meta, replayed });
      return answer;
    } catch (err) {
      const result = resultOf(err);
      calls.add(1, { service, result });
      log.warn(`${step} refused or failed`, {
        ...meta,
        event: LogEvent.downstreamCallFailed,
        result,
        error: (err as Error).message,
      });
      throw err;
    }
  }
}
