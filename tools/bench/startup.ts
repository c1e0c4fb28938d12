// Worker start-up as `npm start` runs it: worker/main.ts from spawn to its "worker ready"
// line, which includes whatever it does to get its workflow bundle. The first run starts
// without the bundle cache (its file is removed), the next ones find it.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { PART_ENTRY, partEnv } from '../stack-env.js';
import { Part } from '../supervisor/part.js';
import { lineProbe } from '../supervisor/ready.js';
import * as create from '../../worker/create.js';
import { benchProcess } from './stack.js';

export interface StartupResult {
  workerMainMs: number[];
  /** What the first run found: the cache file removed before it, or no cache at all (older worker). */
  note: string;
}

export async function timeWorkerStartup(temporalAddress: string, runs: number, tag: string): Promise<StartupResult> {
  // Looked up dynamically: a worker without a bundle cache exports no such function.
  const cachePath = (create as { workflowBundleCachePath?: () => string }).workflowBundleCachePath?.();
  if (cachePath) rmSync(cachePath, { force: true });
  const workerMainMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const worker = new Part(
      benchProcess(
        'worker-startup',
        PART_ENTRY.worker,
        partEnv(
          {
            temporal: { address: temporalAddress, namespace: 'default' },
            taskQueue: `bench-startup-${tag}-${i}`,
            worker: { metricsAddress: 'off' },
          },
          'worker',
          { LOG_LEVEL: 'info' },
        ),
        lineProbe('worker ready'),
      ),
    );
    await worker.start();
    workerMainMs.push(performance.now() - t0);
    await worker.stop();
  }
  return {
    workerMainMs,
    note: cachePath
      ? 'run 1 without the bundle cache (its file removed first), later runs with it'
      : 'worker/main.ts has no bundle cache: every run bundles the workflows',
  };
}
