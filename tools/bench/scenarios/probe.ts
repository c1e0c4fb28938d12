// One operation of each type end to end before anything is timed: the whole path works,
// and their histories say which activity kind retrysafe's steps use, so that R1's no-op
// baseline uses the same kind (or the one --activity-kind names).
import { operationRef } from '../../../workflows/identity.js';
import type { BenchOptions } from '../modes.js';
import type { BenchResults } from '../results.js';
import { recordedActivityKind } from '../timeline.js';
import type { BenchContext } from './context.js';
import type { OperationKinds } from './kinds.js';
import { requestFor, submit, TENANT } from './workload.js';

export async function probeActivityKind(
  ctx: BenchContext,
  operations: OperationKinds[],
  requested: BenchOptions['activityKind'],
): Promise<NonNullable<BenchResults['activityKind']>> {
  const { stack, http, runId } = ctx;
  const recorded = new Set<string>();
  for (const op of operations) {
    const ref = operationRef(TENANT, `bench-${runId}-probe-${op.own}`);
    const probe = await submit(http, stack.urls.api, op.own, ref.key, requestFor(op.own));
    if (probe.operation.status !== 'succeeded')
      throw new Error(`probe ${op.own} did not succeed: ${JSON.stringify(probe.operation)}`);
    const probeHistory = await stack.client.workflow.getHandle(ref.workflowId).fetchHistory();
    recorded.add(recordedActivityKind(probeHistory.events ?? []));
  }
  const detected = recorded.size === 1 ? [...recorded][0]! : 'mixed';
  if (requested !== 'auto') {
    return {
      used: requested,
      detected,
      how: `--activity-kind ${requested} (the probe operations' histories showed ${detected})`,
    };
  }
  if (detected === 'regular' || detected === 'local') {
    return { used: detected, detected, how: "read off the probe operations' histories" };
  }
  throw new Error(
    `the probe operations' histories show ${[...recorded].join(', ')} activities: say which baseline R1 compares with (--activity-kind regular|local)`,
  );
}
