// The worker options both bench workers get: the SDK defaults, as worker/main.ts runs
// them. Kept in one place so the retrysafe and baseline workers cannot drift apart.
import type { WorkerOptions } from '@temporalio/worker';

export const benchWorkerOptions: Partial<WorkerOptions> = {};
