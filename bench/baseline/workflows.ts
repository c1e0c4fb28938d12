// The bare-Temporal baseline: the same number of activities as a payment (1) and a
// checkout (3), each a no-op, with no memo, no search attributes and no compensation
// stack. Whatever retrysafe costs beyond these workflows is retrysafe's own.
// Each comes in both activity kinds: regular activities (scheduled on the task queue, one
// workflow task per step) and local activities (run inside the workflow task, recorded as
// markers), because R1 compares retrysafe with the baseline of the kind its steps use.
// The "tracked" variants add exactly retrysafe's bookkeeping (a memo and a search
// attribute upsert when each step starts and at the end, as workflows/progress.ts does)
// and nothing else, to price that bookkeeping alone.
// Deterministic like workflows/: it imports only the workflow SDK, contracts and types.
import { proxyActivities, proxyLocalActivities, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { SearchAttributes, type StepName } from '../../workflows/contracts.js';
import type { BaselineActivities } from './activities.js';

// The same start-to-close and retry backoff as a retrysafe step (retriedUntilDeadline in workflows/activity-options.ts).
const STEP = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '250ms', backoffCoefficient: 2, maximumInterval: '5s' },
} as const;

const regular = proxyActivities<BaselineActivities>(STEP);
const local = proxyLocalActivities<BaselineActivities>(STEP);

type Noop = (key: string) => Promise<void>;

async function steps(noop: Noop, key: string, n: number): Promise<{ ok: true }> {
  for (let i = 0; i < n; i++) await noop(key);
  return { ok: true };
}

const STEPS: StepName[] = ['reserve_items', 'charge_payment', 'confirm_reservation'];

async function tracked(noop: Noop, key: string, names: StepName[]): Promise<{ ok: true }> {
  const progress = names.map((name) => ({ name, status: 'pending', downstreamKey: `${key}/${name}` }));
  const publish = (step: StepName, status: string) => {
    upsertMemo({ step, steps: progress.map((s) => ({ ...s })) });
    upsertSearchAttributes([
      { key: SearchAttributes.OperationStatus, value: status },
      { key: SearchAttributes.OperationStep, value: step },
    ]);
  };
  for (const s of progress) {
    s.status = 'running';
    publish(s.name, 'processing');
    await noop(key);
    s.status = 'completed';
  }
  publish(names[names.length - 1]!, 'succeeded');
  return { ok: true };
}

type Input = { key: string };

export const bare1 = ({ key }: Input) => steps(regular.noop, key, 1);
export const bare3 = ({ key }: Input) => steps(regular.noop, key, 3);
export const bare1Tracked = ({ key }: Input) => tracked(regular.noop, key, ['charge_payment']);
export const bare3Tracked = ({ key }: Input) => tracked(regular.noop, key, STEPS);

export const bare1Local = ({ key }: Input) => steps(local.noop, key, 1);
export const bare3Local = ({ key }: Input) => steps(local.noop, key, 3);
export const bare1LocalTracked = ({ key }: Input) => tracked(local.noop, key, ['charge_payment']);
export const bare3LocalTracked = ({ key }: Input) => tracked(local.noop, key, STEPS);
