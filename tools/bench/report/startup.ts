// How long the worker takes to start from its entry point, the first time without its
// bundle cache: what a user restarting a worker waits.
import type { Section } from './context.js';

export const startup: Section = ({ r }) => {
  if (!r.startup) return [];
  const s = r.startup;
  return [
    '## Worker start-up',
    '',
    `\`node --import tsx worker/main.ts\` from spawn to its "worker ready" line, ${s.workerMainMs.length} times in a row ` +
      `(${s.note}): ${s.workerMainMs.map((v) => `${(v / 1000).toFixed(2)} s`).join(', ')}. ` +
      `(The bench's own workers use bundles built once at the start of the run: ${(r.settings.bundleMs / 1000).toFixed(1)} s for both, in parallel with Temporal's start.)`,
    '',
  ];
};
