// The ratios table and what follows it: R4's worst value against its target, the clock's
// and the time budget's warnings, and the latency chart.
import { describe, expect, it } from 'vitest';
import { ratios } from '../../../tools/bench/report/ratios.js';
import { fixture, linesStarting, render, scenario } from './fixture.js';

describe('report ratios', () => {
  it('shows every ratio at each concurrency beside its target', () => {
    expect(linesStarting(render(ratios), '| ')).toEqual([
      '| ratio | c=1 | c=32 | target |',
      '| R1 payment ÷ bare 1 activity (ops/s) | 0.75 | 0.78 | ≥ 0.9 |',
      '| R1 checkout ÷ bare 3 activities (ops/s) | 0.63 | 0.77 | ≥ 0.9 |',
      '| R1 payment, completed ÷ wall time (context) | 0.75 | 0.77 | — |',
      '| R1 checkout, completed ÷ wall time (context) | 0.63 | 0.76 | — |',
      '| R2 payment p50 | 1.33 | 1.24 | — |',
      '| R2 payment p99 | 1.33 | 1.21 | ≤ 1.25 |',
      '| R2 checkout p50 | 1.58 | 1.33 | — |',
      '| R2 checkout p99 | 1.71 | 1.33 | ≤ 1.25 |',
      '| R4 replay p50 ÷ plain p50 | 1.78 | 1.54 | ≤ 2 |',
      '| R4 at p99 (context) | 2.12 | 2.62 | — |',
      "| R4 from mean latency (Little's law, context) | 1.93 | 1.64 | — |",
    ]);
  });

  it("ends with R4's worst, the batches the budget left out and the chart, with no clock note on a healthy clock", () => {
    const tail = render(ratios).split('\n').slice(-7);
    expect(tail).toEqual([
      '',
      'R4 (worst over c): 1.78 against its target ≤ 2: ✅. Bare baselines in this run: local activities.',
      '',
      '**Time budget ran out** (a busy machine): left out payment c=32 round 3, bare1 c=32 round 3.',
      '',
      '![latency chart](run.png)',
      '',
    ]);
  });

  it('takes the worst R4 over the concurrencies that have one, and marks it missed above its target', () => {
    const r = fixture();
    r.ratios[0]!.r4 = Number.NaN;
    r.ratios[1]!.r4 = 2.5;
    expect(render(ratios, r)).toContain('R4 (worst over c): 2.50 against its target ≤ 2: ❌.');
    r.ratios[1]!.r4 = Number.NaN;
    expect(render(ratios, r)).toContain('R4 (worst over c): n/a against its target ≤ 2: ❌.');
  });

  it('names the scenarios whose clock stood still in over a fifth of the samples', () => {
    const r = fixture();
    scenario(r, 'replay', 1).nonPositiveSamples = 601; // of 3000
    scenario(r, 'plain', 32).nonPositiveSamples = 1200; // of 6000: a fifth exactly, not named
    expect(render(ratios, r)).toContain(
      '**Clock**: in replay (cached) c=1 more than a fifth of the latency samples read ≤ 0 ms:',
    );
  });

  it("warns when the machine's clock stalled in over 5% of reads, from the worse of its two checks", () => {
    const r = fixture();
    r.machine.clock.end = { stalledShare: 0.3, maxStepMs: 16.66, samples: 1000 };
    expect(render(ratios, r)).toContain(
      "**Clock warning**: this machine's monotonic clock stood still in 30% of back-to-back reads and moved in steps of up to 16.7 ms,",
    );
    r.machine.clock.end.stalledShare = 0.05;
    expect(render(ratios, r)).not.toContain('Clock warning');
  });

  it('links the SVG and says why when there is no PNG, and omits the budget line when nothing was left out', () => {
    const r = fixture();
    r.skipped = [];
    r.chart.pngNote = 'Chromium not found';
    const text = render(ratios, r, { json: 'run.json', svg: 'run.svg', png: null });
    expect(text).not.toContain('Time budget');
    expect(text.split('\n').slice(-5)).toEqual([
      '',
      '![latency chart](run.svg)',
      '',
      '_PNG not rendered: Chromium not found. The SVG above is the chart._',
      '',
    ]);
  });
});
