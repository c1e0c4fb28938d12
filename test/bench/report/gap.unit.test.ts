// Where the gap to bare Temporal is: each operation with one layer added at a time.
import { describe, expect, it } from 'vitest';
import { gap } from '../../../tools/bench/report/gap.js';
import { fixture, lines, linesStarting, render } from './fixture.js';

describe('report gap to bare Temporal', () => {
  it('shows ops/s, latency and CPU from bare through bookkeeping and no API to retrysafe', () => {
    const text = render(gap);
    expect(text.startsWith('### Where the gap is: bookkeeping, saga, API\n\n')).toBe(true);
    expect(linesStarting(text, '| payment |', '| checkout |')).toEqual([
      '| payment | 1 | 17.5 → 15.9 → 13.8 → 13.2 | 55.1 / 91.2 | 60.2 / 108 | 72.5 / 152 | 73.2 / 121 | 71.3 → 79.3 → 89.2 → 93.3 |',
      '| payment | 32 | 23.5 → 21.2 → 21.4 → 18.4 | 1398 / 2106 | 1577 / 1978 | 1498 / 2083 | 1729 / 2544 | 67.4 → 75.4 → 77.7 → 95.3 |',
      '| checkout | 1 | 15.7 → 14.3 → 11.4 → 10.0 | 62.5 / 93.2 | 69.3 / 103 | 85.6 / 174 | 99.0 / 160 | 77.8 → 83.7 → 108.0 → 121.4 |',
      '| checkout | 32 | 21.6 → 17.9 → 14.8 → 16.7 | 1487 / 2211 | 1710 / 3016 | 2150 / 3571 | 1976 / 2945 | 77.0 → 97.4 → 118.0 → 108.8 |',
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it('reads n/a for a layer the run did not measure at some concurrency', () => {
    const r = fixture();
    r.scenarios = r.scenarios.filter((s) => !(s.kind === 'bare3-tracked' && s.concurrency === 1));
    expect(render(gap, r)).toContain(
      '| checkout | 1 | 15.7 → n/a → 11.4 → 10.0 | 62.5 / 93.2 | n/a | 85.6 / 174 | 99.0 / 160 | 77.8 → n/a → 108.0 → 121.4 |',
    );
  });

  it('prints nothing when the run measured no layers (a mode without them)', () => {
    const r = fixture();
    r.scenarios = r.scenarios.filter((s) => !s.kind.endsWith('-direct') && !s.kind.endsWith('-tracked'));
    expect(lines(gap, r)).toEqual([]);
  });
});
