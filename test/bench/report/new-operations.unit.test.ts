// Sections 1–2: each operation against the bare workflow with as many activities, row by
// concurrency, and the errors the run met.
import { describe, expect, it } from 'vitest';
import { newOperations } from '../../../tools/bench/report/new-operations.js';
import { fixture, linesStarting, render, scenario } from './fixture.js';

describe('report new operations', () => {
  it('shows payment against bare with 1 activity and checkout against bare with 3, at each concurrency', () => {
    const text = render(newOperations);
    expect(text).toContain('### payment vs bare workflow with 1 no-op activity\n\n| c | R1 | R2 p50 | R2 p99 | payment ops/s |');
    expect(text).toContain(
      '### checkout vs bare workflow with 3 no-op activities\n\n| c | R1 | R2 p50 | R2 p99 | checkout ops/s |',
    );
    expect(linesStarting(text, '| 1 |', '| 32 |')).toEqual([
      '| 1 | 0.75 | 1.33 | 1.33 | 13.2 | 17.5 | 73.2 / 104 / 121 | 55.1 / 77.8 / 91.2 | 180 / 180 | 0 / 0 | 0 | 0 |',
      '| 32 | 0.78 | 1.24 | 1.21 | 18.4 | 23.5 | 1729 / 2346 / 2544 | 1398 / 1750 / 2106 | 247 / 307 | 0 / 0 | 0 | 0 |',
      '| 1 | 0.63 | 1.58 | 1.71 | 10.0 | 15.7 | 99.0 / 131 / 160 | 62.5 / 83.8 / 93.2 | 174 / 180 | 0 / 0 | 0 | 0 |',
      '| 32 | 0.77 | 1.33 | 1.33 | 16.7 | 21.6 | 1976 / 2727 / 2945 | 1487 / 1883 / 2211 | 331 / 436 | 0 / 0 | 0 | 0 |',
    ]);
    expect(text).not.toContain('Errors:');
    expect(text.endsWith('|\n')).toBe(true);
  });

  it('reads n/a and 0 where a scenario is missing, and counts 202s and retried 503s', () => {
    const r = fixture();
    r.scenarios = r.scenarios.filter((s) => !(s.kind === 'bare1' && s.concurrency === 32));
    Object.assign(scenario(r, 'payment', 32), { answered202: 3, retried503: 2 });
    expect(render(newOperations, r)).toContain(
      '| 32 | 0.78 | 1.24 | 1.21 | 18.4 | n/a | 1729 / 2346 / 2544 | n/a | 247 / 0 | 0 / 0 | 3 | 2 |',
    );
  });

  it("lists every scenario's errors with their samples", () => {
    const r = fixture();
    Object.assign(scenario(r, 'checkout', 1), { errors: 2, errorSamples: ['HTTP 500', 'timeout'] });
    Object.assign(scenario(r, 'plain', 32), { errors: 1, errorSamples: ['ECONNRESET'] });
    expect(render(newOperations, r).split('\n').slice(-3)).toEqual([
      '',
      'Errors: checkout c=1: HTTP 500; timeout · plain c=32: ECONNRESET',
      '',
    ]);
  });
});
