// How a bench worker process runs: until SIGTERM or SIGINT asks it to shut down (it then
// finishes its tasks in flight), and its connection is closed whatever ended the run.
import type { NativeConnection, Worker } from '@temporalio/worker';

export async function runUntilSignal(worker: Worker, connection: NativeConnection): Promise<void> {
  process.once('SIGTERM', () => worker.shutdown());
  process.once('SIGINT', () => worker.shutdown());
  await worker.run().finally(() => connection.close());
}
