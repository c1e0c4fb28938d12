// Process accounting from /proc (Linux): CPU time (user + system, all threads) and the
// resident-set high-water mark, which `clear_refs` resets so a peak belongs to one
// scenario. Elsewhere the readers answer undefined and the report says "n/a".
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time the process has used so far, in ms (utime + stime). */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state is the first, utime the 12th and stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** A process and every living process under it (PostgreSQL's backends are children of the postmaster). */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
}

/**
 * CPU time a process tree has used so far, in ms: every living member's own time plus the
 * time of the children each has reaped (cutime + cstime), so a backend that exits between
 * two readings is still counted. Undefined when the root is gone.
 */
export function treeCpuMs(root: number): number | undefined {
  if (cpuMs(root) === undefined) return undefined;
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
    } catch {
      // gone meanwhile: its time is in its parent's cutime from now on
    }
  }
  return total;
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Peak resident memory in MiB since the process started or since resetPeak(). */
export function peakRssMb(pid: number): number | undefined {
  const kb = statusKb(pid, 'VmHWM');
  return kb === undefined ? undefined : kb / 1024;
}

export function rssMb(pid: number): number | undefined {
  const kb = statusKb(pid, 'VmRSS');
  return kb === undefined ? undefined : kb / 1024;
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0); false when not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface MachineTicks {
  busyMs: number;
  stealMs: number;
  iowaitMs: number;
  totalMs: number;
}

/** Whole-machine CPU time so far (all cores), from the first line of /proc/stat. */
export function machineTicks(): MachineTicks | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
    const toMs = (t: number) => (t * 1000) / CLOCK_TICKS;
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busyMs: toMs(busy), stealMs: toMs(steal!), iowaitMs: toMs(iowait!), totalMs: toMs(busy + idle! + iowait!) };
  } catch {
    return undefined;
  }
}

export interface ClockHealth {
  /** Share of back-to-back reads ~20 µs apart that returned the same time: the clock stood still. */
  stalledShare: number;
  /** Largest single step between two such reads, in ms. */
  maxStepMs: number;
  samples: number;
}

/**
 * Checks the clock every latency here is measured with (performance.now(), i.e.
 * CLOCK_MONOTONIC). On some VMs under load it stands still for milliseconds and then
 * jumps, which turns sub-millisecond latencies into 0 or 4–20 ms. Busy-waits `forMs`.
 */
export function clockHealth(forMs = 200): ClockHealth {
  let samples = 0;
  let stalled = 0;
  let maxStep = 0;
  const end = Date.now() + forMs;
  let prev = performance.now();
  let sink = 0;
  while (Date.now() < end) {
    for (let i = 0; i < 400; i++) sink += i;
    const now = performance.now();
    samples++;
    if (now === prev) stalled++;
    maxStep = Math.max(maxStep, now - prev);
    prev = now;
  }
  return { stalledShare: sink >= 0 ? stalled / Math.max(1, samples) : 0, maxStepMs: maxStep, samples };
}
