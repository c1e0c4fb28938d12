// Where a profiled process spent its time, read off the V8 CPU profiles --cpu-prof wrote: the
// functions with the most self time, and the share of each area of the code (a package, a
// folder of retrysafe, Node's core), optionally only over a window of the run (V8 stamps
// samples with the monotonic clock process.hrtime reads), so start-up and warm-up are left out.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
}

export interface ProfileSummary {
  process: string;
  file: string;
  sampledMs: number;
  top: Array<{ fn: string; where: string; selfMs: number; share: number }>;
  byArea: Array<{ area: string; selfMs: number; share: number }>;
}

const OWN = /\/(client|workflows|activities|worker|common|downstream|bench)\//;

function areaOf(url: string): string {
  if (!url) return '(native / V8)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return 'node core';
  const own = OWN.exec(url);
  return own ? `retrysafe ${own[1]}/` : url.replace(/^file:\/\//, '');
}

/** One profile's self time by function and by area, the top `topN` of each; only samples within `window` (µs) when given. */
export function summarizeProfile(
  process: string,
  dir: string,
  file: string,
  topN = 12,
  window?: { fromUs: number; toUs: number },
): ProfileSummary {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  (profile.samples ?? []).forEach((id, i) => {
    at += profile.timeDeltas?.[i] ?? 0;
    if (!window || (at >= window.fromUs && at <= window.toUs))
      self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0) / 1000);
  });
  const perFn = new Map<string, { fn: string; where: string; selfMs: number }>();
  const perArea = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)?.callFrame ?? { functionName: '(idle)', url: '', lineNumber: 0 };
    if (functionName === '(idle)' || functionName === '(program)') continue;
    total += ms;
    const where = url
      ? `${url.replace(/^file:\/\/.*?\/(node_modules\/|(?=client|workflows|activities|worker|common|downstream|bench))/, '')}:${lineNumber + 1}`
      : '';
    const entry = perFn.get(`${functionName}@${where}`) ?? { fn: functionName || '(anonymous)', where, selfMs: 0 };
    entry.selfMs += ms;
    perFn.set(`${functionName}@${where}`, entry);
    perArea.set(areaOf(url), (perArea.get(areaOf(url)) ?? 0) + ms);
  }
  const share = (ms: number) => (total > 0 ? ms / total : 0);
  return {
    process,
    file,
    sampledMs: total,
    top: [...perFn.values()]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, topN)
      .map((e) => ({ ...e, share: share(e.selfMs) })),
    byArea: [...perArea]
      .map(([area, ms]) => ({ area, selfMs: ms, share: share(ms) }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, topN),
  };
}

/** Every .cpuprofile under dir/<process>/ (one per thread), busiest first per process; threads under 50 ms left out. */
export function summarizeProfiles(dir: string, window?: { fromUs: number; toUs: number }): ProfileSummary[] {
  let processes: string[] = [];
  try {
    processes = readdirSync(dir);
  } catch {
    return [];
  }
  return processes.flatMap((p) =>
    readdirSync(join(dir, p))
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => summarizeProfile(p, join(dir, p), f, 12, window))
      .filter((s) => s.sampledMs > 50)
      .sort((a, b) => b.sampledMs - a.sampledMs),
  );
}
