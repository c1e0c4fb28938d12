// What the processes of a run cost over a stretch of it, read from /proc (Linux): CPU time
// (user + system, all threads; for a process tree, its reaped children too), the resident-set
// high-water mark (VmHWM, which `clear_refs` resets so a peak belongs to one batch), the whole
// machine's busy time, and the Temporal calls the bench's API counted. Elsewhere the readers
// answer undefined and the report says "n/a".
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { HttpClient } from './load.js';

const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
const toMs = (ticks: number) => (ticks * 1000) / TICKS;

/** The fields of /proc/<pid>/stat after "(comm)": state first, ppid, ..., utime the 12th, stime, cutime, cstime. */
function stat(pid: number | string): number[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  } catch {
    return undefined;
  }
}

/** CPU time the process has used so far, in ms. */
export function cpuMs(pid: number): number | undefined {
  const f = stat(pid);
  return f && toMs(f[11]! + f[12]!);
}

/**
 * CPU time of a process and every living process under it (PostgreSQL's backends), with
 * the time of the children each has reaped, so a backend that exits between two readings
 * is still counted. Undefined when the root is gone.
 */
export function treeCpuMs(root: number): number | undefined {
  if (!stat(root)) return undefined;
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    const f = stat(entry);
    if (f) parents.set(Number(entry), f[1]!);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree.reduce((total, pid) => {
    const f = stat(pid);
    return total + (f ? toMs(f[11]! + f[12]! + f[13]! + f[14]!) : 0);
  }, 0);
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident memory now, and its peak since the process started or since resetPeak(), in MiB. */
export const rssMb = (pid: number) => statusMb(pid, 'VmRSS');
export const peakRssMb = (pid: number) => statusMb(pid, 'VmHWM');

/** Resets VmHWM to the current RSS (Linux ≥ 4.0); false when not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Whole-machine CPU time so far (all cores, steal included), from the first line of /proc/stat. */
function machineTicks(): { busyMs: number; stealMs: number; totalMs: number } | undefined {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busyMs: toMs(busy), stealMs: toMs(steal!), totalMs: toMs(busy + idle! + iowait!) };
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
 * Checks the clock every latency here is measured with (performance.now()): on some VMs under
 * load it stands still for milliseconds and then jumps, which turns sub-millisecond latencies
 * into 0 or 4–20 ms. Busy-waits `forMs`.
 */
export function clockHealth(forMs = 200): ClockHealth {
  let [samples, stalled, maxStep, sink] = [0, 0, 0, 0];
  const end = Date.now() + forMs;
  let prev = performance.now();
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

export interface Usage {
  /** CPU ms per process over the scenario. */
  cpuMs: Record<string, number>;
  /** Peak RSS (MiB) per process during the scenario. */
  peakRssMb: Record<string, number>;
  /** Temporal RPCs the API made, by method. */
  rpcs: Record<string, number>;
  /** Whether the peaks were reset at the start (else they are since process start). */
  peakReset: boolean;
  /** CPU the whole machine spent (all cores), the part no process of this run spent, and steal. */
  machineBusyMs: number;
  foreignMs: number;
  stealMs: number;
  /** Capacity over the scenario: wall time × cores. */
  capacityMs: number;
}

/** Meters the named processes (those in `trees` with their whole tree) and the APIs' Temporal calls. */
export class Accounting {
  constructor(
    private readonly pids: Record<string, number>,
    private readonly http: HttpClient,
    private readonly apiUrls: string[],
    private readonly trees: ReadonlySet<string> = new Set(),
  ) {}

  private cpu(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const ms = this.trees.has(name) ? treeCpuMs(pid) : cpuMs(pid);
      if (ms !== undefined) out[name] = ms;
    }
    return out;
  }

  private async rpcs(): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (const url of this.apiUrls) {
      const { body } = await this.http.json<Record<string, number>>('GET', `${url}/_bench/rpcs`);
      for (const [method, n] of Object.entries(body)) total[method] = (total[method] ?? 0) + n;
    }
    return total;
  }

  /** Starts measuring; the returned function ends it and answers the usage in between. */
  async start(): Promise<() => Promise<Usage>> {
    const rpcsBefore = await this.rpcs();
    const machineBefore = machineTicks();
    const peakReset = Object.values(this.pids).map(resetPeak).every(Boolean);
    const cpuBefore = this.cpu();
    return async () => {
      const [machineAfter, cpuAfter, rpcsAfter] = [machineTicks(), this.cpu(), await this.rpcs()];
      const cpu = Object.fromEntries(
        Object.keys(cpuAfter)
          .filter((name) => cpuBefore[name] !== undefined)
          .map((name) => [name, cpuAfter[name]! - cpuBefore[name]!]),
      );
      const peaks = Object.entries(this.pids).flatMap(([name, pid]) => {
        const peak = peakRssMb(pid);
        return peak === undefined ? [] : [[name, peak] as const];
      });
      const rpcs = Object.entries(rpcsAfter)
        .map(([method, n]) => [method, n - (rpcsBefore[method] ?? 0)] as const)
        .filter(([, n]) => n > 0);
      const busy = machineBefore && machineAfter ? machineAfter.busyMs - machineBefore.busyMs : 0;
      const ours = Object.values(cpu).reduce((a, b) => a + b, 0);
      return {
        cpuMs: cpu,
        peakRssMb: Object.fromEntries(peaks),
        rpcs: Object.fromEntries(rpcs),
        peakReset,
        machineBusyMs: busy,
        foreignMs: machineBefore && machineAfter ? Math.max(0, busy - ours) : 0,
        stealMs: machineBefore && machineAfter ? machineAfter.stealMs - machineBefore.stealMs : 0,
        capacityMs: machineBefore && machineAfter ? machineAfter.totalMs - machineBefore.totalMs : 0,
      };
    };
  }
}

/** Adds b into a (CPU and RPCs summed, peaks maxed): merging the rounds of one scenario. */
export function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return structuredClone(b);
  const sum = (x: Record<string, number>, y: Record<string, number>, f = (p: number, q: number) => p + q) =>
    Object.fromEntries([...new Set([...Object.keys(x), ...Object.keys(y)])].map((k) => [k, f(x[k] ?? 0, y[k] ?? 0)]));
  return {
    cpuMs: sum(a.cpuMs, b.cpuMs),
    peakRssMb: sum(a.peakRssMb, b.peakRssMb, Math.max),
    rpcs: sum(a.rpcs, b.rpcs),
    peakReset: a.peakReset && b.peakReset,
    machineBusyMs: a.machineBusyMs + b.machineBusyMs,
    foreignMs: a.foreignMs + b.foreignMs,
    stealMs: a.stealMs + b.stealMs,
    capacityMs: a.capacityMs + b.capacityMs,
  };
}
