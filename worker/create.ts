// Builds a worker for the retrysafe task queue: the workflows in workflows/ and the
// activities wired to real downstream clients. Shared by worker/main.ts and the tests.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { createBankClient } from '../activities/bank.js';
import { createReservationsClient } from '../activities/reservations.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  bankUrl: string;
  reservationsUrl: string;
  downstreamTimeoutMs: number;
  /** A prebuilt bundle (bundleWorkflowCode) saves the webpack step, e.g. in tests. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra worker options (tuning, identity). */
  options?: Partial<WorkerOptions>;
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const activities = createActivities({
    bank: createBankClient({ baseUrl: opts.bankUrl, timeoutMs: opts.downstreamTimeoutMs }),
    reservations: createReservationsClient({ baseUrl: opts.reservationsUrl, timeoutMs: opts.downstreamTimeoutMs }),
  });
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    ...opts.options,
  });
}
