// Waits on what a workflow is doing instead of on the clock: a test that must change the
// world between two steps (bring a sandbox back up once the fence is under way) polls
// the workflow's pending activities, so it holds on a slow machine and never idles.
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';

/** Resolves once `activityType` is scheduled and not yet completed for the workflow. */
export async function pendingActivity(handle: WorkflowHandle, activityType: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { raw } = await handle.describe();
    if (raw.pendingActivities?.some((a) => a.activityType?.name === activityType)) return;
    if (Date.now() > deadline) throw new Error(`${handle.workflowId}: ${activityType} not pending after ${timeoutMs} ms`);
    await sleep(100);
  }
}
