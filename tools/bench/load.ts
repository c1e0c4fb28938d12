// Closed-loop load: `concurrency` clients, each starting its next operation as soon as
// its previous one answered, until `total` operations were started or `maxMs` passed
// (then the ones in flight finish). Throughput is the operations completed over the wall
// time of the whole batch. Both bounds hold, so a batch is short on a slow machine too.
import { performance } from 'node:perf_hooks';

export interface BatchResult {
  latenciesMs: number[];
  wallMs: number;
  ok: number;
  errors: string[];
  /** True when the time bound, not the count, ended the batch. */
  cappedByTime: boolean;
}

export async function closedLoop(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
  maxMs = Number.POSITIVE_INFINITY,
): Promise<BatchResult> {
  const latenciesMs: number[] = [];
  const errors: string[] = [];
  let next = 0;
  let cappedByTime = false;
  const started = performance.now();
  const client = async () => {
    for (;;) {
      if (performance.now() - started > maxMs) {
        cappedByTime ||= next < total;
        return;
      }
      const i = next++;
      if (i >= total) return;
      const t0 = performance.now();
      try {
        await op(i);
        latenciesMs.push(performance.now() - t0);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, client));
  return { latenciesMs, wallMs: performance.now() - started, ok: latenciesMs.length, errors, cappedByTime };
}
