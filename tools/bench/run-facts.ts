// What a run's results say about the run itself, beside its figures: the command line that
// reproduces it, the settings and counts, the engine's flags, the peers' versions, and the
// fields every results file opens with.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBinDir } from '../postgres.js';
import type { MachineInfo } from './machine.js';
import type { BenchOptions } from './modes.js';
import { PEERS_DIR, type PeerName } from './peers/index.js';
import { benchWorkerOptions } from './processes/worker-options.js';
import type { BenchResults } from './results.js';

/** The `npm run bench` line that repeats this run: only the flags that differ from the mode's defaults. */
export function commandLine(opts: BenchOptions): string {
  const flags = [
    ...(opts.mode.name === 'default' ? [] : [`--${opts.mode.name}`]),
    ...(opts.overload === 'only' ? ['--overload'] : []),
    ...(opts.overload === 'none' && opts.mode.overloadByDefault ? ['--no-overload'] : []),
    ...(opts.peers ? ['--peers'] : []),
    ...(opts.overload !== 'only' && opts.ablation !== opts.mode.ablationByDefault
      ? [opts.ablation ? '--ablation' : '--no-ablation']
      : []),
    ...(opts.activityKind === 'auto' ? [] : [`--activity-kind ${opts.activityKind}`]),
    ...(opts.profile ? ['--profile'] : []),
  ];
  return `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`;
}

function packageVersion(dir: string, name: string): string {
  try {
    return (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function peerVersions(peer: PeerName): Record<string, string> {
  if (peer === 'restate') {
    return Object.fromEntries(
      ['@restatedev/restate-server', '@restatedev/restate-sdk'].map((p) => [p, packageVersion(PEERS_DIR, p)]),
    );
  }
  let postgres = 'unknown';
  try {
    postgres = execFileSync(join(postgresBinDir(), 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // reported as unknown
  }
  return { '@dbos-inc/dbos-sdk': packageVersion(PEERS_DIR, '@dbos-inc/dbos-sdk'), postgresql: postgres };
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

export function settingsOf(opts: BenchOptions, bundleMs: number, counts: Record<string, unknown>): BenchResults['settings'] {
  return {
    logLevel: opts.logLevel,
    workerOptions: Object.keys(benchWorkerOptions).length
      ? JSON.stringify(benchWorkerOptions)
      : 'SDK defaults (as worker/main.ts)',
    apiCache: 'RETRYSAFE_CACHE_SIZE 10000, RETRYSAFE_CACHE_TTL 10m (defaults); second API: RETRYSAFE_CACHE_SIZE=0',
    bundleMs,
    batchMaxMs: opts.mode.batchMaxMs,
    profiled: opts.profile,
    counts,
  };
}

/** The engine as it ran: its CLI's version, its flags, and the journal mode read back after it stopped. */
export function temporalOf(
  cli: string,
  argv: string[],
  dataFs: string,
  journalMode: string | undefined,
): BenchResults['temporal'] {
  return {
    cli: cli.split('\n')[0]!,
    argv,
    pragmasPassed: argv.flatMap((a, i, all) => (all[i - 1] === '--sqlite-pragma' ? [a] : [])),
    journalMode,
    dataFs,
  };
}

/** The fields every results file opens with, in their order; the writer sets the duration. */
export function resultsHead(
  opts: BenchOptions,
  startedAt: string,
  machine: MachineInfo,
): Pick<BenchResults, 'schema' | 'name' | 'mode' | 'command' | 'startedAt' | 'durationMs' | 'machine'> {
  return { schema: 3, name: opts.name, mode: opts.mode.name, command: commandLine(opts), startedAt, durationMs: 0, machine };
}
