// Section 7: what each operation costs Temporal in state transitions and history, beside
// the bare workflow with as many activities, and the event types of one history of each.
import type { Section } from './context.js';
import { n2, table } from './format.js';
import { label, operationsOf, type Operation } from './kinds.js';

/** Each kind beside the one it is compared with (none: a baseline itself). */
const rowsOf = (ops: readonly Operation[]): Array<[string, string | undefined]> => [
  ...ops.map((op): [string, string] => [op.own, op.bare]),
  ...ops.flatMap((op): Array<[string, string]> => (op.fair ? [[op.fair, op.bare]] : [])),
  ...ops.map((op): [string, string] => [op.tracked, op.bare]),
  ...ops.map((op): [string, undefined] => [op.bare, undefined]),
];

const diff = (a?: number, c?: number) =>
  a === undefined || c === undefined ? '—' : `${a - c >= 0 ? '+' : ''}${a - c} (×${n2(a / c)})`;

export const history: Section = ({ r }) => {
  const hist = (k: string) => r.history.find((h) => h.kind === k);
  const types = [...new Set(r.history.flatMap((h) => Object.keys(h.events)))];
  return [
    '## 7. State transitions and history per operation',
    '',
    'Medians over a sample of executions from this run (DescribeWorkflowExecution: `stateTransitionCount`, `historyLength`, `historySizeBytes`).',
    '',
    table(
      ['operation', 'state transitions', 'vs bare', 'history events', 'vs bare', 'history bytes', 'vs bare', 'sampled'],
      rowsOf(operationsOf(r))
        .filter(([k], i, all) => hist(k) && all.findIndex(([x]) => x === k) === i)
        .map(([k, b]) => {
          const h = hist(k)!;
          const base = b ? hist(b) : undefined;
          return [
            label(k),
            h.stateTransitions,
            diff(h.stateTransitions, base?.stateTransitions),
            h.historyEvents,
            diff(h.historyEvents, base?.historyEvents),
            h.historyBytes,
            diff(h.historyBytes, base?.historyBytes),
            h.sampled,
          ];
        }),
    ),
    '',
    'Event types in one history of each:',
    '',
    table(
      ['event type', ...r.history.map((h) => label(h.kind))],
      types.map((t) => [t, ...r.history.map((h) => h.events[t] ?? 0)]),
    ),
    '',
  ];
};
