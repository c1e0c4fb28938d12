// The CPU profiles of a --profile run: per process, the share of each area of the code and
// the functions with the most self time.
import type { Section } from './context.js';
import { table } from './format.js';

const share = (v: number) => `${(v * 100).toFixed(1)}%`;

export const profiles: Section = ({ r }) => {
  if (!r.profiles.length) return [];
  const out = ['## CPU profiles (--profile)'];
  for (const p of r.profiles) {
    out.push('');
    out.push(`### ${p.process} — ${p.file} (${(p.sampledMs / 1000).toFixed(1)} s sampled, idle excluded)`);
    out.push('');
    out.push(
      table(
        ['area', 'self ms', 'share'],
        p.byArea.map((a) => [a.area, a.selfMs.toFixed(0), share(a.share)]),
      ),
    );
    out.push('');
    out.push(
      table(
        ['function', 'where', 'self ms', 'share'],
        p.top.map((t) => [`\`${t.fn}\``, t.where, t.selfMs.toFixed(0), share(t.share)]),
      ),
    );
  }
  out.push('');
  return out;
};
