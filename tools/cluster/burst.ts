// A burst of payments through the API, each retried with its own key until it ends, with
// a progress line every second: the load under which the crash drills were run. The same
// key on every retry is what makes a retry after a 503 or a reset connection safe.
//
//   npx tsx tools/cluster/burst.ts --api http://127.0.0.1:3000 [--count 200] [--concurrency 16]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values: flags } = parseArgs({
  options: {
    api: { type: 'string', default: 'http://127.0.0.1:3000' },
    count: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    amount: { type: 'string', default: '100' },
    wait: { type: 'string', default: '0' },
  },
  strict: true,
});

const count = Number(flags.count);
const started = Date.now();
const prefix = `burst-${started}`;
const state = {
  started: 0,
  succeeded: 0,
  failed: 0,
  httpErrors: new Map<string, number>(),
  netErrors: 0,
  latencies: [] as number[],
};
let lastDone = 0;

async function one(i: number): Promise<void> {
  const key = `${prefix}-${i}`;
  const t0 = Date.now();
  let first = true;
  for (;;) {
    try {
      const res = first
        ? await fetch(`${flags.api}/v1/payments`, {
            method: 'POST',
            headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json', Prefer: `wait=${flags.wait}` },
            body: JSON.stringify({ account: 'acc_alice', amount: Number(flags.amount), currency: 'EUR' }),
            signal: AbortSignal.timeout(35_000),
          })
        : await fetch(`${flags.api}/v1/operations/${key}`, { signal: AbortSignal.timeout(10_000) });
      const body = (await res.json()) as { status?: string };
      if (res.status === 200 || res.status === 202) {
        if (first) state.started++;
        first = false;
        if (body.status === 'succeeded' || body.status === 'failed') {
          state[body.status]++;
          state.latencies.push(Date.now() - t0);
          lastDone = Date.now();
          return;
        }
      } else {
        const k = `${res.status}`;
        state.httpErrors.set(k, (state.httpErrors.get(k) ?? 0) + 1);
      }
    } catch {
      state.netErrors++;
    }
    await sleep(250);
  }
}

async function main(): Promise<void> {
  let next = 0;
  const report = setInterval(() => {
    const s = ((Date.now() - started) / 1000).toFixed(0);
    const errs = [...state.httpErrors].map(([k, v]) => `${k}×${v}`).join(' ');
    console.log(
      `${new Date().toISOString()} +${s}s started ${state.started}/${count} succeeded ${state.succeeded} failed ${state.failed} http-errors [${errs}] net-errors ${state.netErrors}`,
    );
  }, 1000);
  await Promise.all(
    Array.from({ length: Number(flags.concurrency) }, async () => {
      while (next < count) await one(next++);
    }),
  );
  clearInterval(report);
  const lat = state.latencies.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
  const secs = (lastDone - started) / 1000;
  console.log(
    `done: ${state.succeeded} succeeded, ${state.failed} failed in ${secs.toFixed(1)} s (${(count / secs).toFixed(1)}/s); ` +
      `latency p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${lat.at(-1)} ms; http errors ${JSON.stringify(Object.fromEntries(state.httpErrors))}, net errors ${state.netErrors}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
