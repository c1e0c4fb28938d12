// The worker's start-up time from its entry point.
import { describe, expect, it } from 'vitest';
import { startup } from '../../../tools/bench/report/startup.js';
import { fixture, lines, render } from './fixture.js';

describe('report worker start-up', () => {
  it('gives each start in seconds, how the first was made cold, and the bundle time of the run', () => {
    expect(render(startup)).toBe(
      [
        '## Worker start-up',
        '',
        '`node --import tsx worker/main.ts` from spawn to its "worker ready" line, 2 times in a row (run 1 without the ' +
          "bundle cache (its file removed first), later runs with it): 5.00 s, 2.41 s. (The bench's own workers use " +
          "bundles built once at the start of the run: 10.0 s for both, in parallel with Temporal's start.)",
        '',
      ].join('\n'),
    );
  });

  it('prints nothing when start-up was not timed', () => {
    const r = fixture();
    r.startup = null;
    expect(lines(startup, r)).toEqual([]);
  });
});
