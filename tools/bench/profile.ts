// Reads the V8 CPU profiles that --cpu-prof wrote and answers where the time went: the
// functions with the most self time, and the share of whole packages (by file path).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }>;
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  process: string;
  file: string;
  sampledMs: number;
  top: Array<{ fn: string; where: string; selfMs: number; share: number }>;
  byArea: Array<{ area: string; selfMs: number; share: number }>;
}

/** Which part of the code a script URL belongs to, for the by-area table. */
function areaOf(url: string): string {
  if (!url) return '(native / V8)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return 'node core';
  const own = /\/(client|workflows|activities|worker|common|downstream|bench)\//.exec(url);
  return own ? `retrysafe ${own[1]}/` : url.replace(/^file:\/\//, '');
}

function summarizeOne(processName: string, file: string, profile: CpuProfile, topN: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (deltas[i] ?? 0) / 1000);
  let total = 0;
  const perFn = new Map<string, { fn: string; where: string; selfMs: number }>();
  const perArea = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    total += ms;
    const where = url
      ? `${url.replace(/^file:\/\/.*?\/(node_modules\/|(?=client|workflows|activities|worker|common|downstream|bench))/, '')}:${lineNumber + 1}`
      : '';
    const key = `${functionName}@${where}`;
    const entry = perFn.get(key) ?? { fn: functionName || '(anonymous)', where, selfMs: 0 };
    entry.selfMs += ms;
    perFn.set(key, entry);
    const area = areaOf(url);
    perArea.set(area, (perArea.get(area) ?? 0) + ms);
  }
  const share = (ms: number) => (total > 0 ? ms / total : 0);
  return {
    process: processName,
    file,
    sampledMs: total,
    top: [...perFn.values()]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, topN)
      .map((e) => ({ ...e, share: share(e.selfMs) })),
    byArea: [...perArea.entries()]
      .map(([area, ms]) => ({ area, selfMs: ms, share: share(ms) }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, topN),
  };
}

/** Every .cpuprofile under dir/<process>/, busiest thread first per process. */
export function summarizeProfiles(dir: string, topN = 12): ProfileSummary[] {
  const out: ProfileSummary[] = [];
  let processes: string[] = [];
  try {
    processes = readdirSync(dir);
  } catch {
    return out;
  }
  for (const processName of processes) {
    const files = readdirSync(join(dir, processName)).filter((f) => f.endsWith('.cpuprofile'));
    const summaries = files.map((f) =>
      summarizeOne(processName, f, JSON.parse(readFileSync(join(dir, processName, f), 'utf8')) as CpuProfile, topN),
    );
    out.push(...summaries.filter((s) => s.sampledMs > 50).sort((a, b) => b.sampledMs - a.sampledMs));
  }
  return out;
}
