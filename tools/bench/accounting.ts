// What one scenario cost each process: CPU time (from /proc), the peak resident memory
// during the scenario (VmHWM, reset at its start), and the Temporal calls the API made.
import type { HttpClient } from './http.js';
import { cpuMs, machineTicks, peakRssMb, resetPeak, treeCpuMs } from './proc.js';

export interface Usage {
  /** CPU ms per process over the scenario. */
  cpuMs: Record<string, number>;
  /** Peak RSS (MiB) per process during the scenario. */
  peakRssMb: Record<string, number>;
  /** Temporal RPCs the API made, by method. */
  rpcs: Record<string, number>;
  /** Whether the peaks were reset at the start (else they are since process start). */
  peakReset: boolean;
  /** CPU the whole machine spent (all cores), and the part no process of this run spent. */
  machineBusyMs: number;
  foreignMs: number;
  stealMs: number;
  /** Capacity over the scenario: wall time × cores. */
  capacityMs: number;
}

export class Accounting {
  constructor(
    private readonly pids: Record<string, number>,
    private readonly http: HttpClient,
    private readonly apiUrls: string[],
    /** Processes counted with their whole tree (PostgreSQL forks a backend per connection). */
    private readonly trees: ReadonlySet<string> = new Set(),
  ) {}

  private cpu(name: string, pid: number): number | undefined {
    return this.trees.has(name) ? treeCpuMs(pid) : cpuMs(pid);
  }

  private async rpcCounts(): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (const url of this.apiUrls) {
      const { body } = await this.http.json<Record<string, number>>('GET', `${url}/_bench/rpcs`);
      for (const [method, n] of Object.entries(body)) total[method] = (total[method] ?? 0) + n;
    }
    return total;
  }

  /** Starts measuring; the returned function ends it and answers the usage in between. */
  async start(): Promise<() => Promise<Usage>> {
    const rpcsBefore = await this.rpcCounts();
    const machineBefore = machineTicks();
    let peakReset = true;
    const cpuBefore: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      peakReset = resetPeak(pid) && peakReset;
      const cpu = this.cpu(name, pid);
      if (cpu !== undefined) cpuBefore[name] = cpu;
    }
    return async () => {
      const machineAfter = machineTicks();
      const usage: Usage = {
        cpuMs: {},
        peakRssMb: {},
        rpcs: {},
        peakReset,
        machineBusyMs: 0,
        foreignMs: 0,
        stealMs: 0,
        capacityMs: 0,
      };
      for (const [name, pid] of Object.entries(this.pids)) {
        const cpu = this.cpu(name, pid);
        if (cpu !== undefined && cpuBefore[name] !== undefined) usage.cpuMs[name] = cpu - cpuBefore[name];
        const peak = peakRssMb(pid);
        if (peak !== undefined) usage.peakRssMb[name] = peak;
      }
      if (machineBefore && machineAfter) {
        usage.machineBusyMs = machineAfter.busyMs - machineBefore.busyMs;
        usage.stealMs = machineAfter.stealMs - machineBefore.stealMs;
        usage.capacityMs = machineAfter.totalMs - machineBefore.totalMs;
        const ours = Object.values(usage.cpuMs).reduce((a, b) => a + b, 0);
        usage.foreignMs = Math.max(0, usage.machineBusyMs - ours);
      }
      const rpcsAfter = await this.rpcCounts();
      for (const [method, n] of Object.entries(rpcsAfter)) {
        const delta = n - (rpcsBefore[method] ?? 0);
        if (delta > 0) usage.rpcs[method] = delta;
      }
      return usage;
    };
  }
}

/** Adds b into a (CPU and RPCs summed, peaks maxed): merging the rounds of one scenario. */
export function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return structuredClone(b);
  const out = structuredClone(a);
  for (const [k, v] of Object.entries(b.cpuMs)) out.cpuMs[k] = (out.cpuMs[k] ?? 0) + v;
  for (const [k, v] of Object.entries(b.peakRssMb)) out.peakRssMb[k] = Math.max(out.peakRssMb[k] ?? 0, v);
  for (const [k, v] of Object.entries(b.rpcs)) out.rpcs[k] = (out.rpcs[k] ?? 0) + v;
  out.peakReset = a.peakReset && b.peakReset;
  out.machineBusyMs += b.machineBusyMs;
  out.foreignMs += b.foreignMs;
  out.stealMs += b.stealMs;
  out.capacityMs += b.capacityMs;
  return out;
}
