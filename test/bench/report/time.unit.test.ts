// Section 6, where the time goes: each operation's phases inside Temporal beside its bare
// workflow's, what lies outside the history, and the CPU per operation of every process.
import { describe, expect, it } from 'vitest';
import { timeGoes } from '../../../tools/bench/report/time.js';
import { fixture, lines, linesStarting, render, sameWorkRun } from './fixture.js';

describe('report where the time goes', () => {
  it('shows checkout then payment beside bare, phase by phase, with what the client waited outside the history', () => {
    const text = render(timeGoes);
    expect(text).toContain('Inside Temporal, from the histories of 20 operations per kind at c=1 (medians');
    const checkout = text.slice(text.indexOf('### checkout'), text.indexOf('### payment'));
    expect(checkout.split('\n')).toEqual([
      '### checkout vs bare, 3 activities (local activities), ms',
      '',
      '| phase | checkout | bare, 3 activities |',
      '|---|---|---|',
      '| workflow tasks: scheduled → started (dispatch) | 8.70 | 8.20 |',
      '| workflow tasks: started → completed (worker) | 62.0 | 32.9 |',
      '| step 1: local activity (inside its workflow task) — reserve_items / noop | 5.52 | 1.08 |',
      '| step 2: local activity (inside its workflow task) — charge_payment / noop | 5.06 | 1.04 |',
      '| step 3: local activity (inside its workflow task) — confirm_reservation / noop | 5.18 | 0.90 |',
      '| between events (not covered above) | 2.80 | 0.31 |',
      '| start → close (in the history) | 77.5 | 43.4 |',
      '| workflow tasks per operation | 1 | 1 |',
      '| client end-to-end p50, c=1 | 99.0 | 62.5 |',
      '| outside the history (API, start RPC, result) | 21.5 | 19.1 |',
      '',
      '',
    ]);
    expect(text).toContain('### payment vs bare, 1 activity (local activities), ms');
    expect(text).toContain('| step 1: local activity (inside its workflow task) — charge_payment / noop | 5.57 | 1.21 |');
  });

  it('shows the CPU per operation of each process, ours, bare and the peers, one column per role', () => {
    const text = render(timeGoes);
    expect(text).toContain(
      '| operation | c | all ms/op | api | worker | temporal | bank | reservations | bench (Temporal client) | ' +
        'restate-server | restate-service | PostgreSQL | dbos-service |',
    );
    expect(linesStarting(text, '| payment | 1 |', '| bare, 1 activity | 32 |', '| checkout on DBOS | 32 |')).toEqual([
      '| payment | 1 | 84.3 | 10.0 | 28.1 | 43.9 | 2.3 | 0.0 |  |  |  |  |  |',
      '| bare, 1 activity | 32 | 63.7 |  | 16.6 | 41.9 |  |  | 5.2 |  |  |  |  |',
      '| checkout on DBOS | 32 | 25.3 |  |  |  | 1.1 | 2.2 |  |  |  | 10.4 | 11.6 |',
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it("marks phases the bare workflow has no timeline for, and leaves out the peers' columns when none ran", () => {
    const r = fixture();
    r.timeline = r.timeline!.filter((t) => t.kind !== 'bare1');
    r.scenarios = r.scenarios.filter((s) => s.kind !== 'restate' && s.kind !== 'dbos');
    const text = render(timeGoes, r);
    expect(text).toContain('| step 1: local activity (inside its workflow task) — charge_payment | 5.57 | — |');
    expect(text).toContain('| start → close (in the history) | 49.1 | n/a |');
    expect(text).toContain('| workflow tasks per operation | 1 | — |');
    expect(text).toContain('| outside the history (API, start RPC, result) | 24.1 | n/a |');
    expect(text).toContain(
      '| operation | c | all ms/op | api | worker | temporal | bank | reservations | bench (Temporal client) |\n',
    );
  });

  it('leaves out an operation whose histories were not sampled', () => {
    const r = fixture();
    r.timeline = r.timeline!.filter((t) => t.kind !== 'checkout');
    const text = render(timeGoes, r);
    expect(text).not.toContain('### checkout');
    expect(text).toContain('### payment vs bare, 1 activity');
  });

  it('prints nothing when the run sampled no timeline', () => {
    const r = fixture();
    r.timeline = [];
    expect(lines(timeGoes, r)).toEqual([]);
    delete r.timeline;
    expect(lines(timeGoes, r)).toEqual([]);
  });

  it('adds the same work on bare Temporal as a column between retrysafe and the floor, when the run read its histories', () => {
    const r = sameWorkRun();
    const bare = r.timeline!.find((t) => t.kind === 'bare3')!;
    r.timeline!.push({
      ...structuredClone(bare),
      kind: 'bare-http-checkout',
      startToCloseMs: 60,
      stepNames: ['reserve_items', 'charge_payment', 'confirm_reservation'],
    });
    const text = render(timeGoes, r);
    expect(text).toContain("### checkout vs bare + checkout's HTTP calls and bare, 3 activities (local activities), ms");
    expect(linesStarting(text, '| phase | checkout', '| start → close (in the history) |')).toEqual([
      "| phase | checkout | bare + checkout's HTTP calls | bare, 3 activities |",
      '| start → close (in the history) | 77.5 | 60.0 | 43.4 |',
      '| start → close (in the history) | 49.1 | 35.4 |',
    ]);
    // Its CPU per operation has its own rows, between retrysafe's and the floor's.
    expect(linesStarting(text, "| bare + checkout's HTTP calls | 1 |")).toEqual([
      "| bare + checkout's HTTP calls | 1 | 100.0 |  | 30.0 | 50.0 | 4.0 | 6.0 | 10.0 |  |  |  |  |",
    ]);
  });
});
