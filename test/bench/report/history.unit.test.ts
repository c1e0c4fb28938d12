// Section 7: state transitions and history per operation against bare, and the event types.
import { describe, expect, it } from 'vitest';
import { history } from '../../../tools/bench/report/history.js';
import { fixture, linesStarting, render, sameWorkRun } from './fixture.js';

describe('report history cost', () => {
  it('shows each operation and bookkeeping-only workflow against bare, and the baselines on their own', () => {
    expect(linesStarting(render(history), '|').slice(0, 8)).toEqual([
      '| operation | state transitions | vs bare | history events | vs bare | history bytes | vs bare | sampled |',
      '|---|---|---|---|---|---|---|---|',
      '| payment | 3 | +0 (×1.00) | 11 | +5 (×1.83) | 3431 | +2351 (×3.18) | 20 |',
      '| checkout | 3 | +0 (×1.00) | 15 | +7 (×1.88) | 6293 | +4549 (×3.61) | 20 |',
      '| bare 1 + bookkeeping | 3 | +0 (×1.00) | 10 | +4 (×1.67) | 2760 | +1680 (×2.56) | 20 |',
      '| bare 3 + bookkeeping | 3 | +0 (×1.00) | 16 | +8 (×2.00) | 5405 | +3661 (×3.10) | 20 |',
      '| bare, 1 activity | 3 | — | 6 | — | 1080 | — | 20 |',
      '| bare, 3 activities | 3 | — | 8 | — | 1744 | — | 20 |',
    ]);
  });

  it('counts the event types of one history of each, in the order they were sampled', () => {
    const text = render(history);
    expect(text).toContain(
      'Event types in one history of each:\n\n' +
        '| event type | payment | checkout | bare, 1 activity | bare, 3 activities | bare 1 + bookkeeping | bare 3 + bookkeeping |',
    );
    expect(linesStarting(text, '| MARKER_RECORDED |')).toEqual(['| MARKER_RECORDED | 2 | 4 | 1 | 3 | 1 | 3 |']);
    expect(linesStarting(text, '| UPSERT_WORKFLOW_SEARCH_ATTRIBUTES |')).toEqual([
      '| UPSERT_WORKFLOW_SEARCH_ATTRIBUTES | 2 | 2 | 0 | 0 | 2 | 4 |',
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it('drops a row whose kind was not sampled, and the difference when its baseline was not', () => {
    const r = fixture();
    r.history = r.history.filter((h) => h.kind !== 'bare1' && h.kind !== 'bare3-tracked');
    const text = render(history, r);
    expect(text).toContain('| payment | 3 | — | 11 | — | 3431 | — | 20 |');
    expect(text).not.toContain('| bare 3 + bookkeeping |');
    expect(text).not.toContain('| bare, 1 activity |');
  });

  it('heads a column with the kind itself when the report has no label for it (an older run)', () => {
    const r = fixture();
    r.history = [{ ...r.history[0]!, kind: 'bare1Local' }];
    expect(render(history, r)).toContain('| event type | bare1Local |');
  });

  it('prints both tables with no rows when no history was sampled', () => {
    const r = fixture();
    r.history = [];
    expect(linesStarting(render(history, r), '|')).toEqual([
      '| operation | state transitions | vs bare | history events | vs bare | history bytes | vs bare | sampled |',
      '|---|---|---|---|---|---|---|---|',
      '| event type |',
      '|---|',
    ]);
  });

  it('shows the same work on bare Temporal against the floor, after the operations', () => {
    const r = sameWorkRun();
    const bare = r.history.find((h) => h.kind === 'bare1')!;
    r.history.push({ ...structuredClone(bare), kind: 'bare-http-payment', historyBytes: bare.historyBytes + 200 });
    // After retrysafe's own rows, before the bookkeeping-only ones.
    expect(linesStarting(render(history, r), '| ').slice(3, 5)).toEqual([
      "| bare + payment's HTTP calls | 3 | +0 (×1.00) | 6 | +0 (×1.00) | 1280 | +200 (×1.19) | 20 |",
      '| bare 1 + bookkeeping | 3 | +0 (×1.00) | 10 | +4 (×1.67) | 2760 | +1680 (×2.56) | 20 |',
    ]);
  });
});
