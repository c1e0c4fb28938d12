// `npx tsx tools/bench/startup-build.ts` (it builds dist/ first): start-up of each process in
// both layouts, from source through tsx (as `npm start` runs it) and compiled (`npm run build`,
// as production runs it). For the API, the worker and the two sandboxes: the time from spawn
// until it answers (GET /healthz; the worker's "worker ready" line, once it has connected and
// loaded its workflow bundle) and its resident memory a second later. One process at a time,
// on a dev server of its own. A first round is discarded (it builds each layout's bundle
// cache, creates the sandboxes' databases and warms the file cache); then RUNS rounds, medians.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../dev-server.js';
import { compiledEntry, loopbackUrl, PART_ENTRY, partEnv, type StackDescription, type StackPartName } from '../stack-env.js';
import { freePort } from '../supervisor/ports.js';
import { httpProbe, lineProbe } from '../supervisor/ready.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import { median } from './load.js';
import { table } from './report.js';
import { timeStart } from './phases/startup.js';
import { ROOT } from './stack.js';

const RUNS = 3;
const LAYOUTS = ['tsx', 'compiled'] as const;
const PARTS: StackPartName[] = ['api', 'worker', 'bank', 'reservations'];

async function main(): Promise<void> {
  console.log('building dist/ (npm run build)');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = mkdtempSync(join(tmpdir(), 'retrysafe-startup-'));
  const server = await startDevServer({
    bin: ensureTemporalCli(),
    dbFile: join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
    logLevel: 'error',
  });
  const temporal = { address: server.address, namespace: 'default' };
  // The worker calls nothing here: it only has to start, so its sandboxes are a closed port.
  const nowhere = { url: 'http://127.0.0.1:9' };
  let queue = 0;
  const describe = (part: StackPartName, port: number, layout: string): StackDescription =>
    part === 'api'
      ? { temporal, taskQueue: 'startup-bench', api: { host: '127.0.0.1', port } }
      : part === 'worker'
        ? {
            temporal,
            taskQueue: `startup-bench-${queue++}`,
            bank: nowhere,
            reservations: nowhere,
            worker: { metricsAddress: 'off' },
          }
        : { [part]: { host: '127.0.0.1', port, db: join(dir, `${part}-${layout}.db`) } };
  const samples = new Map<string, { ms: number[]; rss: number[] }>();
  const loadBefore = loadavg()[0]!;
  try {
    for (let round = 0; round <= RUNS; round++) {
      for (const part of PARTS) {
        // Alternated, so neither layout always starts on the heels of the other.
        for (const layout of round % 2 ? [...LAYOUTS].reverse() : LAYOUTS) {
          const port = await freePort();
          const ready = part === 'worker' ? lineProbe('worker ready') : httpProbe(`${loopbackUrl(port)}/healthz`);
          const entry = layout === 'tsx' ? PART_ENTRY[part] : compiledEntry(PART_ENTRY[part]);
          const { ms, rss } = await timeStart(part, entry, partEnv(describe(part, port, layout), part), ready, 1_000);
          if (round === 0) continue;
          const s = samples.get(`${part} ${layout}`) ?? { ms: [], rss: [] };
          s.ms.push(ms);
          if (rss !== undefined) s.rss.push(rss);
          samples.set(`${part} ${layout}`, s);
        }
      }
      console.log(round === 0 ? 'warm-up round done' : `round ${round} of ${RUNS} done`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const cell = (part: string, layout: string, what: 'ms' | 'rss', digits: number) => {
    const values = samples.get(`${part} ${layout}`)?.[what] ?? [];
    return values.length ? median(values).toFixed(digits) : 'n/a';
  };
  console.log(
    `\nNode ${process.version}, ${RUNS} runs each, medians; load average ${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}\n`,
  );
  const head = ['process', 'start-up tsx (ms)', 'start-up compiled (ms)', 'RSS tsx (MiB)', 'RSS compiled (MiB)'];
  console.log(
    table(
      head,
      PARTS.map((p) => [
        p,
        cell(p, 'tsx', 'ms', 0),
        cell(p, 'compiled', 'ms', 0),
        cell(p, 'tsx', 'rss', 1),
        cell(p, 'compiled', 'rss', 1),
      ]),
    ),
  );
  console.log('\nsamples (start-up ms / RSS MiB):');
  for (const [key, s] of samples)
    console.log(`  ${key}: ${s.ms.map((v) => v.toFixed(0)).join(', ')} / ${s.rss.map((v) => v.toFixed(1)).join(', ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
