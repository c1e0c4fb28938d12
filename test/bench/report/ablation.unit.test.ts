// Section 9: each server configuration's figures beside the first row's (every setting on).
import { describe, expect, it } from 'vitest';
import { ablation } from '../../../tools/bench/report/ablation.js';
import { fixture, lines, linesStarting, render } from './fixture.js';

describe('report ablation', () => {
  it('shows each configuration against every setting on, naming moves of 15 % or more', () => {
    const text = render(ablation);
    expect(text).toContain(
      'Per row: 20 checkouts and 20 bare three-step workflows (local activities) at c=1, 96 of each at c=32, after 6 of ' +
        "each to warm up; ops/s by Little's law as above. Settings from tools/dev-server.ts DEV_SERVER_TUNING.",
    );
    expect(linesStarting(text, '|')).toEqual([
      '| server | checkout c=1 p50 ms | checkout c=32 ops/s | bare c=1 p50 ms | bare c=32 ops/s | n (c=1 / c=32) | errors |',
      '|---|---|---|---|---|---|---|',
      '| every setting (as shipped) | 110 (×1.00) | 15.0 (×1.00) | 74.7 (×1.00) | 23.4 (×1.00) | 20+20 / 96+96 | 0 |',
      "| none (the dev server's defaults) | 129 (×1.17 worse) | 11.4 (×0.76 worse) | 86.6 (×1.16 worse) | 14.5 (×0.62 worse) | 20+20 / 85+96 | 0 |",
      '| without sqlite-wal | 131 (×1.19 worse) | 11.4 (×0.76 worse) | 91.2 (×1.22 worse) | 16.5 (×0.71 worse) | 20+20 / 81+96 | 0 |',
      '| setting | arguments | why |',
      '|---|---|---|',
      "| sqlite-wal | `--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=full` | a write-ahead log commits with one fsync instead of a rollback journal's several; synchronous=full keeps every commit durable |",
    ]);
    expect(text.endsWith('(×: the row ÷ the first row; "worse"/"better" when it moved by 15 % or more.)\n')).toBe(true);
  });

  it('calls a move better in the right direction for latency and for throughput, and leaves small moves unnamed', () => {
    const r = fixture();
    const row = r.ablation!.rows[2]!;
    Object.assign(row.checkout, { c1P50Ms: 88, c32OpsPerSec: 17.5, errors: 1 });
    Object.assign(row.bare, { c1P50Ms: 80, c32OpsPerSec: 26.5, errors: 2 });
    expect(render(ablation, r)).toContain(
      '| without sqlite-wal | 88.0 (×0.80 better) | 17.5 (×1.16 better) | 80.0 (×1.07) | 26.5 (×1.13) | 20+20 / 81+96 | 3 |',
    );
  });

  it('shows no ratios without the every-setting row, and lists what its time budget left out', () => {
    const r = fixture();
    const a = r.ablation!;
    a.rows = a.rows.slice(1);
    a.skipped = ['without transfer-poll-rps', 'without timer-poll-rps'];
    a.settings = [];
    const text = render(ablation, r);
    expect(text).toContain("| none (the dev server's defaults) | 129 | 11.4 | 86.6 | 14.5 | 20+20 / 85+96 | 0 |");
    expect(text).toContain(
      '**Ablation time budget ran out** (5 min): left out without transfer-poll-rps; without timer-poll-rps.',
    );
    expect(text).not.toContain('| setting |');
  });

  it('prints nothing when the run had no ablation', () => {
    const r = fixture();
    r.ablation = null;
    expect(lines(ablation, r)).toEqual([]);
    delete r.ablation;
    expect(lines(ablation, r)).toEqual([]);
  });

  it('names the operation the ablation measured and its number of steps', () => {
    const r = fixture();
    Object.assign(r.ablation!, { operation: 'transfer', steps: 2 });
    const text = render(ablation, r);
    expect(text).toMatch(/Per row: \d+ transfers and \d+ bare two-step workflows/);
    expect(linesStarting(text, '| server |')).toEqual([
      '| server | transfer c=1 p50 ms | transfer c=32 ops/s | bare c=1 p50 ms | bare c=32 ops/s | n (c=1 / c=32) | errors |',
    ]);
  });
});
