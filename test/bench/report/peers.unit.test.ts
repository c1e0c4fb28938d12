// Section 5: retrysafe's checkout beside the same saga on each peer the run raced.
import { describe, expect, it } from 'vitest';
import { peers } from '../../../tools/bench/report/peers.js';
import { fixture, lines, linesStarting, render, sameWorkRun } from './fixture.js';

describe('report peers', () => {
  it('shows checkout, bare 3 and each peer at each concurrency, with the CPU of every process doing the work', () => {
    const text = render(peers);
    expect(text.startsWith('## 5. The peers: the same checkout on Restate and on DBOS Transact\n\n')).toBe(true);
    expect(
      linesStarting(
        text,
        '| checkout | 1 |',
        '| bare, 3 activities | 32 |',
        '| checkout on DBOS |',
        '| checkout replay',
        '| dbos |',
      ),
    ).toEqual([
      '| checkout | 1 | 10.0 | 99.0 / 131 / 160 | 174 | 0 | 112.9 | api 10.1 · worker 52.6 · temporal 43.1 · bank 2.9 · reservations 4.2 |',
      '| checkout on DBOS | 1 | 30.4 | 30.9 / 47.4 / 61.7 | 300 | 0 | 32.9 | PostgreSQL 7.9 · dbos-service 19.3 · bank 2.0 · reservations 3.7 |',
      '| bare, 3 activities | 32 | 21.6 | 1487 / 1883 / 2211 | 436 | 0 | 72.3 | worker 25.9 · temporal 41.0 · bench (Temporal client) 5.4 |',
      '| checkout on DBOS | 32 | 60.0 | 513 / 802 / 931 | 1116 | 0 | 25.3 | PostgreSQL 10.4 · dbos-service 11.6 · bank 1.1 · reservations 2.2 |',
      '| checkout replay (cached) | 1 | 776.3 | 0.97 / 2.77 / 5.09 | 1.29 | 900 | 0 |',
      '| checkout replay on Restate | 1 | 124.1 | 7.16 / 13.1 / 19.7 | 8.06 | 900 | 0 |',
      '| checkout replay on DBOS | 1 | 240.8 | 3.57 / 7.58 / 10.1 | 4.15 | 900 | 0 |',
      '| checkout replay (cached) | 32 | 1831.5 | 13.0 / 34.3 / 75.9 | 17.5 | 1800 | 0 |',
      '| checkout replay on Restate | 32 | 335.8 | 88.4 / 141 / 232 | 95.3 | 1800 | 0 |',
      '| checkout replay on DBOS | 32 | 453.0 | 65.6 / 107 / 214 | 70.6 | 1800 | 0 |',
      '| dbos | @dbos-inc/dbos-sdk 5.3.0, postgresql postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1) | postgresql fsync = on; postgresql synchronous_commit = on; postgresql full_page_writes = on | postgres, dbos-service |',
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it('shows only the peers the run raced', () => {
    const r = fixture();
    r.peers = r.peers!.filter((p) => p.peer === 'dbos');
    const text = render(peers, r);
    expect(text).not.toContain('Restate |');
    expect(text).not.toContain('| restate |');
    expect(linesStarting(text, '| checkout on DBOS |')).toHaveLength(2);
  });

  it('reads n/a and no CPU for a peer batch the run did not finish', () => {
    const r = fixture();
    r.scenarios = r.scenarios.filter((s) => !(s.kind === 'restate' && s.concurrency === 32));
    expect(render(peers, r)).toContain('| checkout on Restate | 32 | n/a | n/a | 0 | 0 | n/a |  |');
  });

  it('prints nothing when the run raced no peers', () => {
    const r = fixture();
    r.peers = null;
    expect(lines(peers, r)).toEqual([]);
    r.peers = [];
    expect(lines(peers, r)).toEqual([]);
  });

  it("puts the same work on bare Temporal beside the engine's floor when the run measured it", () => {
    const text = render(peers, sameWorkRun());
    expect(linesStarting(text, "| bare + checkout's HTTP calls |")).toEqual([
      "| bare + checkout's HTTP calls | 1 | 20.0 | 50.0 / 70.0 / 80.0 | 100 | 0 | 100.0 | worker 30.0 · temporal 50.0 · bank 4.0 · reservations 6.0 · bench (Temporal client) 10.0 |",
      "| bare + checkout's HTTP calls | 32 | 25.0 | 50.0 / 70.0 / 80.0 | 100 | 0 | 100.0 | worker 30.0 · temporal 50.0 · bank 4.0 · reservations 6.0 · bench (Temporal client) 10.0 |",
    ]);
    expect(render(peers)).not.toContain('HTTP calls');
  });
});
