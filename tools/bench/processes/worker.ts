// A worker process of the bench: BENCH_WORKER_KIND=retrysafe hosts workflows/ with the real
// activities (createWorker); =baseline hosts tools/bench/baseline: the no-op activity, and the
// real activities too (wired to the same sandboxes with the same HTTP clients and timeouts),
// which the same-work baseline's workflows call. Both run with the SDK's default options, as
// worker/main.ts does, and a prebuilt bundle, so start-up is not measured here and the two
// differ only in what they run. It runs until SIGTERM or SIGINT asks it to shut down (it then
// finishes its tasks in flight). The bench reads its CPU time and peak memory from /proc.
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { serviceUrls } from '../../../worker/config.js';
import { createWorker } from '../../../worker/create.js';
import { quietLogger } from '../../quiet-logger.js';
import { baselineWorkerActivities, DOWNSTREAM_TIMEOUT_MS } from '../baseline/activities.js';

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function run(): Promise<void> {
  const [kind, address, taskQueue, codePath] = [
    'BENCH_WORKER_KIND',
    'TEMPORAL_ADDRESS',
    'BENCH_TASK_QUEUE',
    'BENCH_WORKFLOW_BUNDLE',
  ].map(need);
  const services = serviceUrls(need('RETRYSAFE_SERVICES'));
  const urls = { bank: services.get('bank')!, reservations: services.get('reservations')! };
  Runtime.install({
    logger: quietLogger(),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
  const connection = await NativeConnection.connect({ address: address! });
  const common = { connection, namespace: 'default', taskQueue: taskQueue!, workflowBundle: { codePath: codePath! } };
  const worker =
    kind === 'retrysafe'
      ? await createWorker({
          ...common,
          services,
          downstreamTimeoutMs: DOWNSTREAM_TIMEOUT_MS,
        })
      : await Worker.create({ ...common, activities: baselineWorkerActivities(urls) });
  console.log(`bench worker ready (${kind}, task queue ${taskQueue})`);
  process.once('SIGTERM', () => worker.shutdown());
  process.once('SIGINT', () => worker.shutdown());
  await worker.run().finally(() => connection.close());
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
