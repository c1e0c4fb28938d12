// Section 8: CPU and peak memory per operation of each of our processes, scenario by
// scenario, and the notes on the clock and the time-bounded batches.
import { describe, expect, it } from 'vitest';
import { usage } from '../../../tools/bench/report/usage.js';
import { fixture, linesStarting, render, scenario } from './fixture.js';

const RPCS_3 =
  '3.00 (StartWorkflowExecution 1.00, GetWorkflowExecutionHistory 1.00, DescribeNamespace 0.00, DescribeWorkflowExecution 1.00)';

describe('report CPU and memory per operation', () => {
  it("shows the worker, API and Temporal's CPU, the peak and the API's RPCs, from the processes each kind uses", () => {
    const text = render(usage);
    expect(text).toContain('Peak: the resident-set high-water mark (VmHWM) during the scenario, reset at its start.');
    const rows = (prefix: string) => linesStarting(text, prefix);
    expect(rows('| payment | 1 |')).toEqual([
      '| payment | 1 | 28.11 | 295.9 | 10.00 | 43.89 | 2.33 | 0.00 | 2.72 | 93.28 | 2.00 (StartWorkflowExecution 1.00, GetWorkflowExecutionHistory 1.00) | 63% | 1% |',
    ]);
    // The bare workflows' worker is the baseline worker; the API is idle and its RPCs not theirs.
    expect(rows('| bare, 1 activity | 1 |')).toEqual([
      '| bare, 1 activity | 1 | 19.17 | 238.8 | 2.39 | 39.06 | 0.00 | 0.00 | 6.61 | 71.33 | — | 65% | 2% |',
    ]);
    // The plain endpoint's server stands in the API column; the uncached replays' API is the second one.
    expect(rows('| plain endpoint | 1 |')).toEqual([
      '| plain endpoint | 1 | 0.00 | 293.0 | 0.37 | 0.01 | 0.00 | 0.00 | 0.34 | 0.77 | — | 68% | 8% |',
    ]);
    expect(rows('| replay (no cache) | 32 |')).toEqual([
      `| replay (no cache) | 32 | 0.18 | 241.3 | 8.67 | 11.80 | 0.00 | 0.02 | 0.75 | 22.32 | ${RPCS_3} | 95% | 2% |`,
    ]);
    expect(rows('| checkout, no API | 1 |')).toEqual([
      '| checkout, no API | 1 | 48.83 | 266.1 | 0.17 | 37.33 | 1.67 | 3.67 | 10.00 | 108.00 | — | 63% | 0% |',
    ]);
    // Every scenario of ours at both concurrencies, none of the peers'.
    expect(linesStarting(text, '| ')).toHaveLength(1 + 24);
    expect(linesStarting(text, '| checkout on ')).toEqual([]);
    expect(linesStarting(text, '| checkout replay on ')).toEqual([]);
  });

  it('lists the time-bounded batches, or says all', () => {
    const text = render(usage);
    expect(text).toContain(
      "Time-bounded batches (the count was not reached within the batch's time bound, 6 s for new operations; n is what finished): " +
        'checkout c=1, payment c=32, payment, no API c=32,',
    );
    expect(text).toContain('checkout on DBOS c=32, replay (no cache) c=1.\n');
    const r = fixture();
    for (const s of r.scenarios) s.batchesCappedByTime = 1;
    expect(render(usage, r)).toContain('6 s for new operations; n is what finished): all.\n');
    for (const s of r.scenarios) s.batchesCappedByTime = 0;
    expect(render(usage, r)).not.toContain('Time-bounded');
  });

  it('counts the samples at ≤ 0 ms, and says when the peak could not be reset', () => {
    const r = fixture();
    scenario(r, 'plain', 1).nonPositiveSamples = 12;
    scenario(r, 'replay', 32).nonPositiveSamples = 3;
    scenario(r, 'bare3', 32).usage.peakReset = false;
    const text = render(usage, r);
    expect(text).toContain(
      'Clock: plain endpoint c=1: 12, replay (cached) c=32: 3 latency samples were ≤ 0 ms (the monotonic clock',
    );
    expect(text).toContain('during the scenario (could not be reset: peak since start).');
  });

  it('reads n/a for the machine shares when they were not metered', () => {
    const r = fixture();
    Object.assign(scenario(r, 'payment', 1).usage, { capacityMs: 0, machineBusyMs: 0 });
    expect(render(usage, r)).toContain(
      '| 93.28 | 2.00 (StartWorkflowExecution 1.00, GetWorkflowExecutionHistory 1.00) | n/a | n/a |',
    );
  });

  it('ends with the note on the columns when no batch was bounded and the clock kept moving', () => {
    const r = fixture();
    for (const s of r.scenarios) s.batchesCappedByTime = 0;
    expect(render(usage, r).split('\n').slice(-2)).toEqual([
      'For bare workflows the worker column is the baseline worker; for the plain endpoint the API column is the plain server. ' +
        '"Machine busy": all cores\' busy time over the scenario ÷ capacity (from /proc/stat, steal included); "not ours": the ' +
        'share of it spent by processes outside this run (other work on a shared machine), which slows every scenario it overlaps.',
      '',
    ]);
  });
});
