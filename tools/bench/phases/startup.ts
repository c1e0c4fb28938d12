// How long a process takes from spawn until it is ready (and its memory a moment later): the
// worker as `npm start` runs it (worker/main.ts, its workflow bundle included: the first run
// without the bundle cache, whose file is removed, the next ones with it), for the report;
// and any part, for tools/bench/startup-build.ts.
import { rmSync } from 'node:fs';
import { workflowBundleCachePath } from '../../../worker/create.js';
import { PART_ENTRY, partEnv } from '../../stack-env.js';
import { Part } from '../../supervisor/part.js';
import { lineProbe, sleep, type Probe } from '../../supervisor/ready.js';
import { rssMb } from '../meter.js';
import { benchProcess } from '../stack.js';
import { engine, type BenchContext } from './context.js';

/** Starts `entry` once, until `ready`; its start-up in ms and its resident memory `settleMs` after, then stops it. */
export async function timeStart(name: string, entry: string, env: Record<string, string>, ready: Probe, settleMs = 0) {
  const part = new Part(benchProcess(name, entry, { LOG_LEVEL: 'info', ...env }, ready));
  const t0 = performance.now();
  await part.start();
  const ms = performance.now() - t0;
  await sleep(settleMs);
  const rss = rssMb(part.pid!);
  await part.stop();
  return { ms, rss };
}

export interface StartupResult {
  workerMainMs: number[];
  note: string;
}

export async function timeWorkerStartup(ctx: BenchContext): Promise<void> {
  rmSync(workflowBundleCachePath(), { force: true });
  const workerMainMs: number[] = [];
  const temporal = { address: engine(ctx).temporal.address, namespace: 'default' };
  for (let i = 0; i < ctx.mode.startupRuns; i++) {
    const env = partEnv({ temporal, taskQueue: `bench-startup-${ctx.runId}-${i}`, worker: { metricsAddress: 'off' } }, 'worker');
    workerMainMs.push((await timeStart('worker-startup', PART_ENTRY.worker, env, lineProbe('worker ready'))).ms);
  }
  ctx.results.startup = { workerMainMs, note: 'run 1 without the bundle cache (its file removed first), later runs with it' };
}
