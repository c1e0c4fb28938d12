// Each operation against bare Temporal doing the same work (R1′): the table of rates,
// latencies and CPU per process on both sides, and the R1′ rows of the ratios.
import { describe, expect, it } from 'vitest';
import { fair } from '../../../tools/bench/report/fair.js';
import { ratios } from '../../../tools/bench/report/ratios.js';
import { lines, linesStarting, render, sameWorkRun } from './fixture.js';

describe('report against the same work', () => {
  it('prints nothing for a run without the same-work baseline (every run before it)', () => {
    expect(lines(fair)).toEqual([]);
  });

  it("shows R1′ and each process's CPU per operation, retrysafe's row above the same work's", () => {
    const text = render(fair, sameWorkRun());
    expect(text.startsWith('### Against bare Temporal doing the same work (R1′)\n\n')).toBe(true);
    expect(linesStarting(text, '| ')).toEqual([
      '| operation | c | system | ops/s | p50 / p99 ms | API ms/op | worker ms/op | Temporal ms/op | bank ms/op | reservations ms/op | client (bench) ms/op | all ms/op | R1′ | CPU ÷ same work |',
      // retrysafe's all: API 1800 + worker 5060 + Temporal 7900 + bank 420 ms over 180 payments; the bench not counted.
      '| payment | 1 | retrysafe | 13.2 | 73.2 / 121 | 10.00 | 28.11 | 43.89 | 2.33 | 0.00 | 2.72 | 84.33 | 0.66 | 0.90 |',
      // The same work's all: its worker, Temporal, the bank and its Temporal client (the bench); not the idle API.
      '| payment | 1 | bare + the same calls | 20.0 | 50.0 / 80.0 | 1.00 | 30.00 | 50.00 | 4.00 | 0.00 | 10.00 | 94.00 |  |  |',
      '| payment | 32 | retrysafe | 18.4 | 1729 / 2544 | 10.77 | 26.32 | 52.19 | 1.42 | 0.04 | 1.30 | 90.73 | 0.74 | 0.97 |',
      '| payment | 32 | bare + the same calls | 25.0 | 50.0 / 80.0 | 1.00 | 30.00 | 50.00 | 4.00 | 0.00 | 10.00 | 94.00 |  |  |',
      '| checkout | 1 | retrysafe | 10.0 | 99.0 / 160 | 10.06 | 52.64 | 43.10 | 2.93 | 4.20 | 1.67 | 112.93 | 0.50 | 1.13 |',
      '| checkout | 1 | bare + the same calls | 20.0 | 50.0 / 80.0 | 1.00 | 30.00 | 50.00 | 4.00 | 6.00 | 10.00 | 100.00 |  |  |',
      '| checkout | 32 | retrysafe | 16.7 | 1976 / 2945 | 10.12 | 42.84 | 47.61 | 1.39 | 2.39 | 1.06 | 104.35 | 0.67 | 1.04 |',
      '| checkout | 32 | bare + the same calls | 25.0 | 50.0 / 80.0 | 1.00 | 30.00 | 50.00 | 4.00 | 6.00 | 10.00 | 100.00 |  |  |',
    ]);
  });

  it('reads n/a where the same work was not measured at a concurrency (the time budget ran out)', () => {
    const r = sameWorkRun();
    r.scenarios = r.scenarios.filter((s) => !(s.kind === 'bare-http-checkout' && s.concurrency === 32));
    expect(linesStarting(render(fair, r), '| checkout | 32 |')).toEqual([
      '| checkout | 32 | retrysafe | 16.7 | 1976 / 2945 | 10.12 | 42.84 | 47.61 | 1.39 | 2.39 | 1.06 | 104.35 | 0.67 | n/a |',
      '| checkout | 32 | bare + the same calls | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |  |  |',
    ]);
  });

  it('adds R1′ to the ratios, after R1, with its target, and says what it divides by', () => {
    const text = render(ratios, sameWorkRun());
    expect(text).toContain("R1′ = the same ÷ bare-Temporal workflows/s making the operation's own keyed HTTP calls");
    expect(linesStarting(text, '| R1')).toEqual([
      '| R1 payment ÷ bare 1 activity (ops/s) | 0.75 | 0.78 | ≥ 0.9 |',
      '| R1 checkout ÷ bare 3 activities (ops/s) | 0.63 | 0.77 | ≥ 0.9 |',
      '| R1′ payment ÷ bare + the same HTTP calls (ops/s) | 0.66 | 0.74 | ≥ 0.9 |',
      '| R1′ checkout ÷ bare + the same HTTP calls (ops/s) | 0.50 | 0.67 | ≥ 0.9 |',
      '| R1 payment, completed ÷ wall time (context) | 0.75 | 0.77 | — |',
      '| R1 checkout, completed ÷ wall time (context) | 0.63 | 0.76 | — |',
      '| R1′ payment, completed ÷ wall time (context) | 0.66 | 0.69 | — |',
      '| R1′ checkout, completed ÷ wall time (context) | 0.50 | 0.62 | — |',
    ]);
    // Runs before it show no R1′ row and no word of it.
    expect(render(ratios)).not.toContain('R1′');
  });
});
