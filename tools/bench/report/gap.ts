// Where the gap to bare Temporal comes from: the same operation measured with one layer
// added at a time (bookkeeping, then the saga with its downstream calls, then the API).
import { find } from '../results.js';
import type { ScenarioResult } from '../scenarios/measure.js';
import type { Section } from './context.js';
import { ms, n1, table } from './format.js';
import { operationsOf } from './kinds.js';

const p5099 = (x?: ScenarioResult) => (x ? `${ms(x.latencyMs.p50)} / ${ms(x.latencyMs.p99)}` : 'n/a');
const allCpu = (x?: ScenarioResult) => (x ? Object.values(x.usage.cpuMs).reduce((a, b) => a + b, 0) / x.ops : Number.NaN);

export const gap: Section = ({ r, cs }) => {
  // The layered batches run together, in the first round, in the modes that have them.
  const ops = operationsOf(r);
  if (!r.scenarios.some((s) => ops.some((op) => s.kind === op.direct))) return [];
  const out = ['### Where the gap is: bookkeeping, saga, API', ''];
  out.push(
    'Measured once (first round) next to the same batches: "+ bookkeeping" is the bare workflow with exactly ' +
      "retrysafe's memo and search-attribute upserts (one of each when a step starts and at the end) and the API's " +
      'start memo and search attributes; "no API" is the retrysafe workflow (real downstream calls, compensation ' +
      "stack, bookkeeping) started by a Temporal client with the API's start options and its result awaited. So " +
      'bare → + bookkeeping prices the bookkeeping, → no API the saga and its downstream calls, → retrysafe the HTTP API.',
  );
  out.push('');
  out.push(
    table(
      [
        'operation',
        'c',
        'ops/s: bare → + bookkeeping → no API → retrysafe',
        'p50 / p99 ms: bare',
        '+ bookkeeping',
        'no API',
        'retrysafe',
        'CPU ms/op (all processes): bare → + bookkeeping → no API → retrysafe',
      ],
      ops.flatMap((op) =>
        cs.map((c) => {
          const steps = [op.bare, op.tracked, op.direct, op.own].map((k) => find(r.scenarios, k, c));
          return [
            op.own,
            c,
            steps.map((x) => n1(x?.steadyOpsPerSec ?? Number.NaN)).join(' → '),
            ...steps.map(p5099),
            steps.map((x) => n1(allCpu(x))).join(' → '),
          ];
        }),
      ),
    ),
  );
  out.push('');
  return out;
};
