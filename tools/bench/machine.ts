// The machine and the versions a run used, for the report's header.
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { clockHealth, type ClockHealth } from './proc.js';
import { ROOT } from './stack.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  loadAverage: string;
  /** The same at the end of the run: the machine is shared, and its load moves every latency. */
  loadAverageEnd?: string;
  node: string;
  temporalCli: string;
  packages: Record<string, string>;
  /** Filesystem type under the run's data dir (tmpfs would make SQLite's fsync free). */
  dataFs: string;
  /** The latency clock, checked at the start and the end of the run. */
  clock: { start: ClockHealth; end?: ClockHealth };
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) return match[1]!.trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(resolve(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The type of the filesystem mounted at the longest prefix of `dir` (/proc/mounts). */
export function filesystemOf(dir: string): string {
  try {
    let best = { point: '', type: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, point, type] = line.split(' ');
      if (
        point &&
        type &&
        (dir === point || dir.startsWith(point.endsWith('/') ? point : `${point}/`)) &&
        point.length > best.point.length
      ) {
        best = { point, type };
      }
    }
    return `${best.type} (mounted at ${best.point || '?'})`;
  } catch {
    return 'unknown';
  }
}

export function machineInfo(temporalCli: string, dataDir: string): MachineInfo {
  return {
    cpuModel: cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    node: process.version,
    temporalCli,
    packages: Object.fromEntries(
      ['@temporalio/client', '@temporalio/worker', '@temporalio/workflow', 'fastify', 'better-sqlite3', 'tsx'].map((p) => [
        p,
        packageVersion(p),
      ]),
    ),
    dataFs: filesystemOf(resolve(dataDir)),
    clock: { start: clockHealth() },
  };
}
