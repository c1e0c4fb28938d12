// A worker process of the bench: BENCH_WORKER_KIND=retrysafe hosts workflows/ with the
// real activities (createWorker); =baseline hosts tools/bench/baseline: the no-op activity, and
// the real activities too (wired to the same sandboxes with the same HTTP clients and
// timeouts), which the fair baseline's workflows call. Both get the same worker options and
// a prebuilt bundle, so start-up is not measured here and the two differ only in what they
// run. The bench reads this process's CPU time and peak memory from /proc.
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { serviceUrls } from '../../../worker/config.js';
import { createWorker } from '../../../worker/create.js';
import { quietLogger } from '../../quiet-logger.js';
import { baselineWorkerActivities, DOWNSTREAM_TIMEOUT_MS } from '../baseline/activities.js';
import { runUntilSignal } from './run-until-signal.js';
import { benchWorkerOptions } from './worker-options.js';

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function run(): Promise<void> {
  const kind = need('BENCH_WORKER_KIND');
  const address = need('TEMPORAL_ADDRESS');
  const taskQueue = need('BENCH_TASK_QUEUE');
  const codePath = need('BENCH_WORKFLOW_BUNDLE');
  const services = serviceUrls(need('RETRYSAFE_SERVICES'));
  const url = (service: string) => services.get(service)!;
  // The CPU bench's bare worker exports metrics as the product worker it is set beside does.
  const metricsAddress = process.env.BENCH_WORKER_METRICS_ADDRESS;
  Runtime.install({
    logger: quietLogger(),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress } } } : {}),
    },
  });
  const connection = await NativeConnection.connect({ address });
  const common = { connection, namespace: 'default', taskQueue, workflowBundle: { codePath } };
  const worker =
    kind === 'retrysafe'
      ? await createWorker({
          ...common,
          services,
          downstreamTimeoutMs: DOWNSTREAM_TIMEOUT_MS,
          options: benchWorkerOptions,
        })
      : await Worker.create({
          ...common,
          activities: baselineWorkerActivities({ bank: url('bank'), reservations: url('reservations') }),
          ...benchWorkerOptions,
        });
  console.log(`bench worker ready (${kind}, task queue ${taskQueue})`);
  await runUntilSignal(worker, connection);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
