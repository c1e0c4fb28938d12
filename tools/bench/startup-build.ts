// Start-up of each process in both layouts: from source through tsx (as `npm start` runs
// it) and compiled (`npm run build`, as production runs it). For each of the API, the
// worker and the two sandboxes: the time from spawn until it answers (GET /healthz; the
// worker's "worker ready" line, once it has connected and loaded its workflow bundle) and
// its resident memory a second later. One process at a time, on a dev server of its own.
// A first round is discarded: it builds each layout's workflow bundle cache, creates the
// sandboxes' databases and warms the file cache. Then RUNS rounds, medians reported.
//
//   npx tsx tools/bench/startup-build.ts        (builds dist/ first)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../dev-server.js';
import { Part } from '../supervisor/part.js';
import { compiledEntry, loopbackUrl, PART_ENTRY, partEnv, type StackPartName } from '../stack-env.js';
import { freePort } from '../supervisor/ports.js';
import { httpProbe, lineProbe, sleep, type Probe } from '../supervisor/ready.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import { rssMb } from './proc.js';
import { benchProcess, ROOT } from './stack.js';
import { median } from './stats.js';

const RUNS = 3;
/** How long after it is ready its memory is read: what it holds once started, not mid-start. */
const SETTLE_MS = 1_000;

type Layout = 'tsx' | 'compiled';
const LAYOUTS: readonly Layout[] = ['tsx', 'compiled'];

interface ProcessKind {
  name: StackPartName;
  /** Its environment and readiness probe, on a fresh port. */
  setup(port: number, layout: Layout): { env: Record<string, string>; ready: Probe };
}

function entryIn(layout: Layout, part: StackPartName): string {
  return layout === 'tsx' ? PART_ENTRY[part] : compiledEntry(PART_ENTRY[part]);
}

async function main(): Promise<void> {
  console.log(`building dist/ (npm run build)`);
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
  const kinds: ProcessKind[] = [
    {
      name: 'api',
      setup: (port) => ({
        env: partEnv({ temporal, taskQueue: 'startup-bench', api: { host: '127.0.0.1', port } }, 'api'),
        ready: httpProbe(`${loopbackUrl(port)}/healthz`),
      }),
    },
    {
      name: 'worker',
      setup: () => ({
        env: partEnv(
          {
            temporal,
            taskQueue: `startup-bench-${queue++}`,
            bank: nowhere,
            reservations: nowhere,
            worker: { metricsAddress: 'off' },
          },
          'worker',
        ),
        ready: lineProbe('worker ready'),
      }),
    },
    ...(['bank', 'reservations'] as const).map((name): ProcessKind => ({
      name,
      setup: (port, layout) => ({
        env: partEnv({ [name]: { host: '127.0.0.1', port, db: join(dir, `${name}-${layout}.db`) } }, name),
        ready: httpProbe(`${loopbackUrl(port)}/healthz`),
      }),
    })),
  ];

  const samples = new Map<string, { ms: number[]; rss: number[] }>();
  const loadBefore = loadavg()[0]!;
  try {
    for (let round = 0; round <= RUNS; round++) {
      for (const kind of kinds) {
        // Alternated, so neither layout always starts on the heels of the other.
        for (const layout of round % 2 ? [...LAYOUTS].reverse() : LAYOUTS) {
          const { env, ready } = kind.setup(await freePort(), layout);
          // LOG_LEVEL info: the worker says it is ready at that level.
          const part = new Part(benchProcess(kind.name, entryIn(layout, kind.name), { LOG_LEVEL: 'info', ...env }, ready));
          const t0 = performance.now();
          await part.start();
          const ms = performance.now() - t0;
          await sleep(SETTLE_MS);
          const rss = rssMb(part.pid!);
          await part.stop();
          if (round === 0) continue;
          const key = `${kind.name} ${layout}`;
          const s = samples.get(key) ?? { ms: [], rss: [] };
          s.ms.push(ms);
          if (rss !== undefined) s.rss.push(rss);
          samples.set(key, s);
        }
      }
      console.log(round === 0 ? 'warm-up round done' : `round ${round} of ${RUNS} done`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const cell = (values: number[], digits: number) => (values.length ? median(values).toFixed(digits) : 'n/a');
  console.log(
    `\nNode ${process.version}, ${RUNS} runs each, medians; load average ${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}\n`,
  );
  console.log('| process | start-up tsx (ms) | start-up compiled (ms) | RSS tsx (MiB) | RSS compiled (MiB) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const kind of kinds) {
    const tsx = samples.get(`${kind.name} tsx`)!;
    const compiled = samples.get(`${kind.name} compiled`)!;
    console.log(
      `| ${kind.name} | ${cell(tsx.ms, 0)} | ${cell(compiled.ms, 0)} | ${cell(tsx.rss, 1)} | ${cell(compiled.rss, 1)} |`,
    );
  }
  console.log('\nsamples (start-up ms / RSS MiB):');
  for (const [key, s] of samples)
    console.log(`  ${key}: ${s.ms.map((v) => v.toFixed(0)).join(', ')} / ${s.rss.map((v) => v.toFixed(1)).join(', ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
