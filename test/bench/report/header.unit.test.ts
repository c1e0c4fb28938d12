// The report's title and its first line: the command, the machine and its load, the raw
// numbers' file; a warning when the run was shorter or slowed by profiling.
import { describe, expect, it } from 'vitest';
import { header } from '../../../tools/bench/report/header.js';
import { fixture, render } from './fixture.js';

const LINE =
  '`npm run bench -- --peers` · mode **default** · started 2026-12-02T00:21:30.655Z · took 705 s · 2 cores, AMD EPYC · ' +
  '**load average 4.95 4.48 4.56** at the start, 3.61 3.54 3.96 at the end (1, 5, 15 min; above 2 every process here ' +
  'waited for a core). Raw numbers: [run.json](run.json).';

describe('report header', () => {
  it('names the run, its command, the machine, its load at the start and the end, and the raw numbers', () => {
    expect(render(header)).toBe(['# retrysafe benchmark — 2026-12-02', '', LINE, ''].join('\n'));
  });

  it('gives the load at the start only when the end was not read', () => {
    const r = fixture();
    delete r.machine.loadAverageEnd;
    expect(render(header, r)).toContain('**load average 4.95 4.48 4.56** at the start (1, 5, 15 min;');
  });

  it('warns that a quick run is indicative and a profiled one slowed', () => {
    const r = fixture();
    r.mode = 'quick';
    r.settings.profiled = true;
    const text = render(header, r);
    expect(text).toContain(
      'Raw numbers: [run.json](run.json). **Profiled run**: the API and the worker ran under --cpu-prof, which slows them.',
    );
    expect(text.split('\n').slice(-2)).toEqual([
      '> **A quick run**: fewer operations and one round per concurrency, so its figures are indicative. ' +
        'The report to quote is a full `npm run bench -- --peers` on a quiet machine.',
      '',
    ]);
  });
});
