// The bench's command line: which sections a run has (the overload section alone, after
// the rest, or not at all), the flags that exclude each other, and the file names.
import { describe, expect, it } from 'vitest';
import { hardLimitMs, MODES, parseOptions, type BenchOptions } from '../../tools/bench/options.js';

const TODAY = new Date('2026-12-03T10:00:00Z');
const parse = (...argv: string[]) => parseOptions(argv, TODAY) as BenchOptions;

describe('npm run bench options', () => {
  it('runs the overload section after the rest in the full run only, and alone with --overload', () => {
    expect(parse()).toMatchObject({ overload: 'also', ablation: true, name: '2026-12-03' });
    expect(parse('--no-overload')).toMatchObject({ overload: 'none', ablation: true, name: '2026-12-03' });
    expect(parse('--quick')).toMatchObject({ overload: 'none', ablation: false, name: '2026-12-03-quick' });
    expect(parse('--overload')).toMatchObject({ overload: 'only', ablation: false, peers: false, name: '2026-12-03-overload' });
    expect(parse('--overload', '--quick')).toMatchObject({ overload: 'only', name: '2026-12-03-quick-overload' });
    expect(parse('--overload', '--name', 'flood')).toMatchObject({ overload: 'only', name: 'flood' });
  });

  it.each([
    [['--overload', '--no-overload'], '--overload and --no-overload exclude each other'],
    [['--overload', '--peers'], '--overload runs the overload section alone: --peers and --ablation do not apply'],
    [['--overload', '--ablation'], '--overload runs the overload section alone: --peers and --ablation do not apply'],
    [['--overload=yes'], "Option '--overload' does not take an argument"],
    [['--no-overload', '--quick', '--smoke'], '--quick and --smoke exclude each other'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseOptions(argv, TODAY)).toThrow(message);
  });

  it('bounds a run by the sections it has: the overload alone by its own budget, the full run by all of them', () => {
    const mode = MODES.default;
    const alone = hardLimitMs({ mode, peers: false, ablation: false, overload: 'only' });
    const without = hardLimitMs({ mode, peers: false, ablation: true, overload: 'none' });
    const full = hardLimitMs({ mode, peers: false, ablation: true, overload: 'also' });
    expect(alone).toBeGreaterThan(mode.overload.budgetMs);
    expect(alone).toBeLessThan(without);
    expect(full - without).toBeGreaterThan(mode.overload.budgetMs);
  });

  it('floods at c=200 and more in the full run, one level in the quick one', () => {
    expect(MODES.default.overload.floods).toEqual([200, 400]);
    expect(MODES.quick.overload.floods).toEqual([200]);
  });
});
