// The bare-Temporal baseline: the same number of activities as a payment (1) and a
// checkout (3), each a no-op, with no memo, no search attributes and no compensation
// stack. Whatever retrysafe costs beyond these two workflows is retrysafe's own.
// The "tracked" variants add exactly retrysafe's bookkeeping (a memo and a search
// attribute upsert when each step starts and at the end, as workflows/progress.ts does)
// and nothing else, to price that bookkeeping alone.
// Deterministic like workflows/: it imports only the workflow SDK, contracts and types.
import { proxyActivities, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { SearchAttributes, type StepName } from '../../workflows/contracts.js';
import type { BaselineActivities } from './activities.js';

// The same start-to-close and retry backoff as a retrysafe step (retriedUntilDeadline in workflows/activity-options.ts).
const { noop } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '250ms', backoffCoefficient: 2, maximumInterval: '5s' },
});

export async function bare1(input: { key: string }): Promise<{ ok: true }> {
  await noop(input.key);
  return { ok: true };
}

export async function bare3(input: { key: string }): Promise<{ ok: true }> {
  await noop(input.key);
  await noop(input.key);
  await noop(input.key);
  return { ok: true };
}

const STEPS: StepName[] = ['reserve_items', 'charge_payment', 'confirm_reservation'];

async function tracked(key: string, names: StepName[]): Promise<{ ok: true }> {
  const steps = names.map((name) => ({ name, status: 'pending', downstreamKey: `${key}/${name}` }));
  const publish = (step: StepName, status: string) => {
    upsertMemo({ step, steps: steps.map((s) => ({ ...s })) });
    upsertSearchAttributes([
      { key: SearchAttributes.OperationStatus, value: status },
      { key: SearchAttributes.OperationStep, value: step },
    ]);
  };
  for (const s of steps) {
    s.status = 'running';
    publish(s.name, 'processing');
    await noop(key);
    s.status = 'completed';
  }
  publish(names[names.length - 1]!, 'succeeded');
  return { ok: true };
}

export async function bare1Tracked(input: { key: string }): Promise<{ ok: true }> {
  return tracked(input.key, ['charge_payment']);
}

export async function bare3Tracked(input: { key: string }): Promise<{ ok: true }> {
  return tracked(input.key, STEPS);
}
