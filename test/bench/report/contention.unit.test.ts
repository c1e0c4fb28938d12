// Section 4: one row per contention trial: executions, effects, answers and waits.
import { describe, expect, it } from 'vitest';
import { contention } from '../../../tools/bench/report/contention.js';
import { fixture, linesStarting, render } from './fixture.js';

const HEAD =
  '| type | executions | claims won | charges | units held | answers | 503s retried | winners | distinct outcomes | ' +
  'winner ms | waiters p50 / p99 ms | waiter p50 ÷ winner | API RPCs in the burst |';

describe('report contention', () => {
  it('shows each trial: one execution and one effect, the answers by status, the winner and the waiters', () => {
    expect(linesStarting(render(contention), '| ')).toEqual([
      HEAD,
      '| payment | 1 | 1 | 1 | — | 100×200 | 0 | 1 | 1 | 269 | 314 / 360 | 1.17 | StartWorkflowExecution 1, GetWorkflowExecutionHistory 100, DescribeNamespace 1 |',
      '| checkout | 1 | 1 | 1 | 1 | 100×200 | 0 | 1 | 1 | 322 | 325 / 355 | 1.01 | StartWorkflowExecution 1, GetWorkflowExecutionHistory 100 |',
    ]);
  });

  it('shows a trial that went wrong as it was: two executions, two charges, mixed answers', () => {
    const r = fixture();
    Object.assign(r.contention[0]!, { executions: 2, charges: 2, statuses: { '200': 97, '503': 3 }, retried503: 3, winners: 2 });
    expect(render(contention, r)).toContain('| payment | 2 | 1 | 2 | — | 97×200, 3×503 | 3 | 2 | 1 | 269 |');
  });

  it('prints the table with no rows when the run had no trials', () => {
    const r = fixture();
    r.contention = [];
    expect(render(contention, r).split('\n').slice(-3)).toEqual([HEAD, `|${'---|'.repeat(13)}`, '']);
  });

  it('shows one figure per account for an operation that moves several (a transfer), and says so', () => {
    const r = fixture();
    const transfer = structuredClone(r.contention[0]!);
    Object.assign(transfer, { type: 'transfer', unitsTaken: null, effects: { 'account from': 1, 'account to': 1 } });
    r.contention.push(transfer);
    const text = render(contention, r);
    expect(text).toContain(
      '÷ the amount (an operation that moves several accounts, a transfer, shows one figure per account, in step order).',
    );
    expect(linesStarting(text, '| transfer |')[0]).toMatch(/^\| transfer \| 1 \| 1 \| 1 · 1 \| — \| /);
    // A run before per-account effects: its one charge figure, and no word of several accounts.
    expect(render(contention)).not.toContain('several accounts');
  });
});
