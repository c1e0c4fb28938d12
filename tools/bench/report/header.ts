// The title and the line a reader needs before any figure: the command, the machine and its
// load at the start and the end, and a warning when the run was not a full one.
import type { Section } from './context.js';

export const header: Section = ({ r, files }) => {
  const out = [`# retrysafe benchmark — ${r.name}`, ''];
  out.push(
    `\`${r.command}\` · mode **${r.mode}** · started ${r.startedAt} · took ${(r.durationMs / 1000).toFixed(0)} s · ` +
      `${r.machine.cores} cores, ${r.machine.cpuModel} · **load average ${r.machine.loadAverage}** at the start` +
      `${r.machine.loadAverageEnd ? `, ${r.machine.loadAverageEnd} at the end` : ''} (1, 5, 15 min; above ${r.machine.cores} every process here waited for a core). ` +
      `Raw numbers: [${files.json}](${files.json}).` +
      (r.settings.profiled ? ' **Profiled run**: the API and the worker ran under --cpu-prof, which slows them.' : ''),
  );
  out.push('');
  if (r.mode !== 'default') {
    out.push(
      `> **A ${r.mode} run**: fewer operations and one round per concurrency, so its figures are indicative. ` +
        'The report to quote is a full `npm run bench -- --peers` on a quiet machine.',
    );
    out.push('');
  }
  return out;
};
