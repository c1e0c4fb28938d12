// Where a profiled process of the CPU bench spent the measured batches, read off the V8
// CPU profiles --cpu-prof wrote (samples outside the batches left out).
import { readFileSync } from 'node:fs';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/**
 * Where a profiled process spent the measured batches: self time by package (or folder of
 * this repository) and by function, counting only the samples taken between `fromUs` and
 * `toUs` (V8 stamps samples with the monotonic clock process.hrtime reads), so start-up,
 * bundling and warm-up are left out.
 */
export function profileSummary(file: string, fromUs: number, toUs: number, top = 30): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at >= fromUs && at <= toUs)
      self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    total += ms;
    const area =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
      (url.startsWith('node:') ? 'node core' : url ? url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '') : '(native / V8)');
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules\/)?/, '')}:${lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + ms);
  }
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => `- ${k}: ${ms.toFixed(0)} ms (${((100 * ms) / total).toFixed(1)} %)`);
  return [`${total.toFixed(0)} ms sampled in the batches`, '', ...rows(areas), '', ...rows(fns)].join('\n');
}
