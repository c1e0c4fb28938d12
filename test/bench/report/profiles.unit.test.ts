// The CPU profiles of a --profile run. The fixture's run was not profiled, so the profile
// here is made up; its shape is what tools/bench/profile.ts writes.
import { describe, expect, it } from 'vitest';
import { profiles } from '../../../tools/bench/report/profiles.js';
import { fixture, lines, render } from './fixture.js';

describe('report CPU profiles', () => {
  it('shows, per profiled process, the share of each area and the functions with the most self time', () => {
    const r = fixture();
    r.profiles = [
      {
        process: 'api',
        file: 'api.cpuprofile',
        sampledMs: 12_345,
        byArea: [{ area: 'fastify', selfMs: 1200.4, share: 0.4123 }],
        top: [{ fn: 'parseBody', where: 'client/api/plugins/json.ts:12', selfMs: 300.6, share: 0.1 }],
      },
      { process: 'worker', file: 'worker.cpuprofile', sampledMs: 940, byArea: [], top: [] },
    ];
    expect(render(profiles, r)).toBe(
      [
        '## CPU profiles (--profile)',
        '',
        '### api — api.cpuprofile (12.3 s sampled, idle excluded)',
        '',
        '| area | self ms | share |',
        '|---|---|---|',
        '| fastify | 1200 | 41.2% |',
        '',
        '| function | where | self ms | share |',
        '|---|---|---|---|',
        '| `parseBody` | client/api/plugins/json.ts:12 | 301 | 10.0% |',
        '',
        '### worker — worker.cpuprofile (0.9 s sampled, idle excluded)',
        '',
        '| area | self ms | share |',
        '|---|---|---|',
        '',
        '| function | where | self ms | share |',
        '|---|---|---|---|',
        '',
      ].join('\n'),
    );
  });

  it('prints nothing when the run was not profiled', () => {
    expect(lines(profiles, fixture())).toEqual([]);
  });
});
