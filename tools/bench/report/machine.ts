// The machine, the versions and every setting the run used, and how to reproduce it: the
// figures mean little without them.
import { clocksOf, type Section } from './context.js';
import { table } from './format.js';

export const machine: Section = ({ r }) => {
  const m = r.machine;
  return [
    '## Machine, versions, flags',
    '',
    table(
      ['what', 'value'],
      [
        ['CPU', `${m.cpuModel}, ${m.cores} cores (shared)`],
        ['memory', `${m.memoryGiB} GiB`],
        ['kernel', m.kernel],
        [
          'load average (1, 5, 15 min)',
          `${m.loadAverage} at the start${m.loadAverageEnd ? `, ${m.loadAverageEnd} at the end` : ''}`,
        ],
        [
          'latency clock (performance.now)',
          clocksOf(r)
            .map(
              (c, i) =>
                `${i === 0 ? 'start' : 'end'}: ${(c.stalledShare * 100).toFixed(0)}% of reads stalled, largest step ${c.maxStepMs.toFixed(2)} ms`,
            )
            .join('; '),
        ],
        ['Node.js', m.node],
        ['Temporal CLI', r.temporal.cli],
        ...Object.entries(m.packages),
        ['Temporal dev server argv', `\`${r.temporal.argv.join(' ')}\``],
        [
          'SQLite pragmas passed (`--sqlite-pragma`)',
          r.temporal.pragmasPassed.length
            ? r.temporal.pragmasPassed.join(', ')
            : "none: the dev server's defaults (connect attributes `mode=rwc` only, one connection)",
        ],
        ['SQLite journal_mode (read back from the file)', r.temporal.journalMode ?? 'unknown'],
        [
          'SQLite synchronous',
          r.temporal.pragmasPassed.find((p) => p.startsWith('synchronous=')) ??
            "not set: SQLite's default, FULL (each commit is fsynced)",
        ],
        ['data directory filesystem', `${r.temporal.dataFs} — a file on disk, not an in-memory database`],
        [
          'server tuning',
          r.tuning ? `${r.tuning.settings.map((t) => t.name).join(', ') || 'none'} (from ${r.tuning.source})` : 'n/a',
        ],
        [
          'activity kind of the steps (and the bare baseline)',
          r.activityKind ? `${r.activityKind.used} (${r.activityKind.how})` : 'regular',
        ],
        ['log level of the stack', r.settings.logLevel],
        ['worker options (both workers)', r.settings.workerOptions],
        ['API cache', r.settings.apiCache],
        ['counts', `\`${JSON.stringify(r.settings.counts)}\``],
      ],
    ),
    '',
    `Reproduce: \`${r.command}\` (this run). The full report is \`npm run bench -- --peers\` (` +
      // Runs recorded before the overload section took less: their report says what held then.
      (r.overload === undefined
        ? 'the peers and the ablation, 10–15 min'
        : 'every operation type, the peers, the ablation and the overload section, 30–40 min') +
      ' on a quiet 2-core machine); `npm run bench -- --quick` takes a few minutes; `--help` lists the flags. `node --import tsx tools/bench/render.ts <results.json>` re-renders a report from its JSON.',
    '',
  ];
};
