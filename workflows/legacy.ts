// Operations started before an operation carried its program: their input holds no program,
// so they run the definition of their type that this bundle holds, as they always did, and
// they must issue exactly the commands their histories recorded. Two things differ from a
// program run:
//
// - a declared call was scheduled as the one generic activity `callService`, not as an
//   activity type of its own (the step's name);
// - payment's and checkout's steps were hand-written activities (`chargePayment`,
//   `reserveItems`, ...), whose names and inputs every such history records. Those names
//   are still registered by the worker (activities/legacy.ts), now as aliases of the
//   declared calls, so that histories replay and steps those operations have not reached
//   yet still run.
//
// Nothing new is started on this path: the API records a program in every input.
import type { OperationSettings } from './contracts.js';
import type { OperationDefinition } from './definition.js';
import { stepsProgram, type ActivityCall, type OperationProgram, type ProgramStep } from './program.js';

/** The generic activity every declared call was scheduled as before each call had a type of its own. */
export const SERVICE_ACTIVITY = 'callService';

/** What a built-in step or compensation was recorded as: its hand-written activity, and the answer fields it returned. */
interface RecordedActivity {
  call: ActivityCall;
  result?: Readonly<Record<string, string>>;
}

const CHARGE: Readonly<Record<string, RecordedActivity>> = {
  charge_payment: {
    call: { kind: 'activity', activity: 'chargePayment', input: { account: 'account', amount: 'amount', currency: 'currency' } },
    result: { chargeId: 'chargeId' },
  },
  reverse_charge: { call: { kind: 'activity', activity: 'reverseCharge' } },
};

const RECORDED_ACTIVITIES: Readonly<Record<string, Readonly<Record<string, RecordedActivity>>>> = {
  payment: CHARGE,
  checkout: {
    reserve_items: {
      call: {
        kind: 'activity',
        activity: 'reserveItems',
        input: { items: 'items', ttlSeconds: { setting: 'holdTtlSeconds' } },
      },
      result: { reservationId: 'reservationId' },
    },
    release_reservation: { call: { kind: 'activity', activity: 'releaseReservation' } },
    ...CHARGE,
    confirm_reservation: { call: { kind: 'activity', activity: 'confirmReservation' } },
  },
};

/** The hold time such a checkout was started with lived in its settings. */
function recordedSettings(definition: OperationDefinition, settings: OperationSettings): Record<string, number> {
  const values: Record<string, number> = {};
  for (const [name, setting] of Object.entries(definition.settings ?? {})) {
    const recorded = (settings as unknown as Record<string, unknown>)[name];
    values[name] = typeof recorded === 'number' ? recorded : setting.default;
  }
  return values;
}

/** The program an operation started without one runs: its type's definition in this bundle, as it was recorded. */
export function legacyProgram(definition: OperationDefinition, settings: OperationSettings): OperationProgram {
  const program = stepsProgram(definition, recordedSettings(definition, settings));
  const recorded = RECORDED_ACTIVITIES[definition.type] ?? {};
  const asRecorded = (step: ProgramStep): ProgramStep => {
    const forward = recorded[step.name];
    const undo = step.compensation && recorded[step.compensation.name];
    return {
      ...step,
      ...(forward ? { call: forward.call, ...(forward.result ? { result: forward.result } : {}) } : {}),
      ...(step.compensation && undo ? { compensation: { name: step.compensation.name, call: undo.call } } : {}),
    };
  };
  return { ...program, version: '', steps: program.steps.map(asRecorded) };
}
