// The bare baseline's worker, a child process of the CPU bench: plain Temporal running
// ./bare-workflow.ts, its one activity the same keyed fetch as the product's activities.
// The runtime is set up as worker/main.ts sets it up.
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { quietLogger } from '../../quiet-logger.js';
import { runUntilSignal } from '../processes/run-until-signal.js';
import type { BareCall } from './bare-workflow.js';

async function runBareWorker(): Promise<void> {
  const env = (name: string) => process.env[name] ?? (() => { throw new Error(`${name} is not set`); })(); // prettier-ignore
  const urls: Record<string, string> = { bank: env('BANK_URL'), reservations: env('RESERVATIONS_URL') };
  Runtime.install({
    logger: quietLogger(),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      metrics: { prometheus: { bindAddress: env('WORKER_METRICS_ADDRESS') } },
    },
  });
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: env('RETRYSAFE_TASK_QUEUE'),
    workflowsPath: new URL('./bare-workflow.ts', import.meta.url).pathname,
    activities: {
      // The same HTTP client as the product's activities (fetch), the same headers and the same rule for a 2xx.
      async keyedCall(call: BareCall): Promise<Record<string, unknown>> {
        const keyed = call.path.includes('{key}');
        const res = await fetch(`${urls[call.service]}${call.path.replace('{key}', encodeURIComponent(call.key))}`, {
          method: call.method,
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            ...(keyed ? {} : { 'idempotency-key': call.key }),
          },
          body: JSON.stringify(call.body),
          signal: AbortSignal.timeout(5_000),
        });
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status < 200 || res.status >= 300) throw new Error(`${call.service} answered ${res.status}`);
        return body;
      },
    },
  });
  await runUntilSignal(worker, connection);
}

runBareWorker().catch((err) => {
  console.error(err);
  process.exit(1);
});
