// One run of `npm run bench` (tools/bench/main.ts) as a process, for the suites that check a
// whole run: started before the suite's tests with the given flags, into a fresh folder of
// the test run's temporary root (removed after the suite), its results parsed when it exits 0.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, inject } from 'vitest';
import type { BenchResults } from '../../tools/bench/results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BenchRun {
  outDir: string;
  run: { exitCode?: number; stdout: string; stderr: string };
  /** Set once the run exited 0. */
  results: BenchResults;
}

/** Registers the run in the calling suite; its fields are set once the suite's beforeAll has run. */
export function benchRun(name: string, flags: string[], timeoutMs: number): BenchRun {
  const bench = {} as BenchRun;
  beforeAll(async () => {
    bench.outDir = mkdtempSync(join(inject('tmpRoot'), `bench-${name}-`));
    bench.run = await execa(
      process.execPath,
      ['--import', 'tsx', 'tools/bench/main.ts', ...flags, '--out', bench.outDir, '--name', name],
      { cwd: ROOT, reject: false, timeout: timeoutMs, env: { LOG_PRETTY: '0' }, stdin: 'ignore' },
    );
    if (bench.run.exitCode === 0)
      bench.results = JSON.parse(readFileSync(join(bench.outDir, `${name}.json`), 'utf8')) as BenchResults;
  }, timeoutMs + 10_000);
  afterAll(() => {
    if (bench.outDir) rmSync(bench.outDir, { recursive: true, force: true });
  });
  return bench;
}
