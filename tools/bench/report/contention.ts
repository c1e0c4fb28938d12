// Section 4: a burst of identical requests for one new key, trial by trial: how many
// executions and downstream effects it caused, and how long the waiters waited.
import type { ContentionTrial } from '../scenarios/contention.js';
import type { Section } from './context.js';
import { ms, n2, table } from './format.js';

/** The accounts' movements of a trial (one figure per account, in step order), or its one charge figure. */
const accounts = (t: ContentionTrial) => {
  const moves = Object.entries(t.effects ?? {}).filter(([what]) => what.startsWith('account '));
  return moves.length ? moves.map(([, n]) => n).join(' · ') : t.charges;
};

export const contention: Section = ({ r }) => {
  const several = r.contention.some((t) => Object.keys(t.effects ?? {}).filter((w) => w.startsWith('account ')).length > 1);
  return [
    '## 4. Contention: 100 identical concurrent requests for one new key',
    '',
    "Executions: runs of the workflow ID in Temporal visibility. Claims won: the API's `retrysafe_operations_started_total`. " +
      "Charges: money the bank moved for the trial's own account ÷ the amount" +
      (several ? ' (an operation that moves several accounts, a transfer, shows one figure per account, in step order)' : '') +
      ". Units: stock taken from the trial's own SKU. " +
      'Winner: the answer without `Idempotent-Replayed`; waiters: the others.',
    '',
    table(
      [
        'type',
        'executions',
        'claims won',
        'charges',
        'units held',
        'answers',
        '503s retried',
        'winners',
        'distinct outcomes',
        'winner ms',
        'waiters p50 / p99 ms',
        'waiter p50 ÷ winner',
        'API RPCs in the burst',
      ],
      r.contention.map((t) => [
        t.type,
        t.executions,
        t.claimsWon,
        accounts(t),
        t.unitsTaken ?? '—',
        Object.entries(t.statuses)
          .map(([s, k]) => `${k}×${s}`)
          .join(', '),
        t.retried503,
        t.winners,
        t.distinctOutcomes,
        ms(t.winnerLatencyMs),
        `${ms(t.waiterLatencyMs.p50)} / ${ms(t.waiterLatencyMs.p99)}`,
        n2(t.waiterOverWinner),
        Object.entries(t.usage.rpcs)
          .map(([m, v]) => `${m} ${v}`)
          .join(', '),
      ]),
    ),
    '',
  ];
};
