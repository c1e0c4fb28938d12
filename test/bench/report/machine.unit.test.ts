// The machine, versions and flags of the run, and how to reproduce it.
import { describe, expect, it } from 'vitest';
import { machine } from '../../../tools/bench/report/machine.js';
import { fixture, linesStarting, render } from './fixture.js';

const row = (text: string, what: string) => linesStarting(text, `| ${what} |`);

describe('report machine, versions and flags', () => {
  it('lists the machine, its clock, the versions, the server command line and the settings', () => {
    const text = render(machine);
    expect(
      text.startsWith('## Machine, versions, flags\n\n| what | value |\n|---|---|\n| CPU | AMD EPYC, 2 cores (shared) |\n'),
    ).toBe(true);
    expect(row(text, 'fastify')).toEqual(['| fastify | 5.12.8 |']);
    expect(text).toContain('| Temporal dev server argv | `server start-dev --ip 127.0.0.1 --port 32748 ');
    expect(text).toContain('| counts | `{"concurrencies":[1,8,32],"rounds":3,');
    expect(text.endsWith('`node --import tsx tools/bench/render.ts <results.json>` re-renders a report from its JSON.\n')).toBe(
      true,
    );
    expect(text).toContain('Reproduce: `npm run bench -- --peers` (this run). The full report is');
  });

  /** The fixture as a run that passed no pragmas, read no journal mode and recorded no tuning, activity kind or end. */
  const unrecorded = () => {
    const r = fixture();
    r.temporal.pragmasPassed = [];
    r.temporal.journalMode = undefined;
    delete r.tuning;
    delete r.activityKind;
    delete r.machine.loadAverageEnd;
    delete r.machine.clock.end;
    return r;
  };

  it.each([
    [
      'SQLite pragmas passed (`--sqlite-pragma`)',
      'journal_mode=wal, synchronous=full',
      "none: the dev server's defaults (connect attributes `mode=rwc` only, one connection)",
    ],
    ['SQLite journal_mode (read back from the file)', 'wal', 'unknown'],
    ['SQLite synchronous', 'synchronous=full', "not set: SQLite's default, FULL (each commit is fsynced)"],
    [
      'server tuning',
      'transfer-poll-rps, timer-poll-rps, visibility-poll-rps, one-task-queue-partition, sqlite-wal (from tools/dev-server.ts DEV_SERVER_TUNING)',
      'n/a',
    ],
    ['activity kind of the steps (and the bare baseline)', "local (read off the probe checkout's history)", 'regular'],
    ['load average (1, 5, 15 min)', '4.95 4.48 4.56 at the start, 3.61 3.54 3.96 at the end', '4.95 4.48 4.56 at the start'],
    [
      'latency clock (performance.now)',
      'start: 0% of reads stalled, largest step 11.71 ms; end: 0% of reads stalled, largest step 4.06 ms',
      'start: 0% of reads stalled, largest step 11.71 ms',
    ],
  ])('shows %s as the run recorded it, and what it was when the run did not', (what, recorded, unrecordedValue) => {
    expect(row(render(machine), what)).toEqual([`| ${what} | ${recorded} |`]);
    expect(row(render(machine, unrecorded()), what)).toEqual([`| ${what} | ${unrecordedValue} |`]);
  });

  it('says none when the tuning had no settings', () => {
    const r = fixture();
    r.tuning!.settings = [];
    expect(row(render(machine, r), 'server tuning')).toEqual([
      '| server tuning | none (from tools/dev-server.ts DEV_SERVER_TUNING) |',
    ]);
  });
});
