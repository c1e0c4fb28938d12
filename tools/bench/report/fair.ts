// Each operation against bare Temporal doing the same work: the same keyed HTTP calls to
// the same sandboxes through the same activities, with nothing of retrysafe's around them
// (no API, no books, no compensations). R1′ at every concurrency, and where the CPU of
// one operation goes on each side, process by process.
import { find } from '../results.js';
import type { ScenarioResult } from '../scenarios/measure.js';
import type { Section } from './context.js';
import { cpuPerOp, n1, n2, ms, table } from './format.js';
import { operationsOf, ratiosOf, systemCpu } from './kinds.js';

/** The processes shown, in order: the bench process is the HTTP client of retrysafe's and the Temporal client of the bare workflows. */
const COLUMNS: Array<[string, (s: ScenarioResult) => number]> = [
  ['API', (s) => cpuPerOp(s, 'api')],
  ['worker', (s) => cpuPerOp(s, s.kind.startsWith('bare') ? 'baselineWorker' : 'worker')],
  ['Temporal', (s) => cpuPerOp(s, 'temporal')],
  ['bank', (s) => cpuPerOp(s, 'bank')],
  ['reservations', (s) => cpuPerOp(s, 'reservations')],
  ['client (bench)', (s) => cpuPerOp(s, 'orchestrator')],
];

export const fair: Section = ({ r, cs }) => {
  const ops = operationsOf(r).filter((op) => op.fair && r.scenarios.some((s) => s.kind === op.fair));
  if (ops.length === 0) return [];
  const out = ['### Against bare Temporal doing the same work (R1′)', ''];
  out.push(
    "The same-work baseline is a bare workflow that makes the operation's own steps: the same keyed HTTP calls to the " +
      "same sandboxes, through retrysafe's own activities and HTTP clients (same timeouts), with the keys retrysafe derives " +
      "(`<tenant>/<key>/<suffix>`) and the same request, as local activities (as retrysafe's first attempts are), started " +
      "and awaited by a Temporal client like the no-op rows. What it lacks is retrysafe's: the API, the start memo and " +
      'search attributes, the progress books, the compensations registered before each step. R1′ = retrysafe ops/s ÷ its ' +
      "ops/s (Little's law, as R1). CPU: ms per operation of each process (API: the idle API for the bare rows); " +
      '"all" sums the processes that do the work: for retrysafe its API, worker, Temporal and the sandboxes (the bench ' +
      "is the user's HTTP client, shown, not counted), for the bare workflow its worker, Temporal, the sandboxes and its " +
      "Temporal client (the bench process, which does the API's part).",
  );
  out.push('');
  out.push(
    table(
      [
        'operation',
        'c',
        'system',
        'ops/s',
        'p50 / p99 ms',
        ...COLUMNS.map(([name]) => `${name} ms/op`),
        'all ms/op',
        'R1′',
        'CPU ÷ same work',
      ],
      ops.flatMap((op) =>
        cs.flatMap((c) => {
          const own = find(r.scenarios, op.own, c);
          const same = find(r.scenarios, op.fair!, c);
          const row = r.ratios.find((x) => x.concurrency === c);
          const line = (s: ScenarioResult | undefined, system: string, tail: string[]) => [
            op.own,
            c,
            system,
            n1(s?.steadyOpsPerSec ?? Number.NaN),
            s ? `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p99)}` : 'n/a',
            ...COLUMNS.map(([, pick]) => (s ? n2(pick(s)) : 'n/a')),
            s ? n2(systemCpu(s).total) : 'n/a',
            ...tail,
          ];
          const cpuRatio = own && same ? systemCpu(own).total / systemCpu(same).total : Number.NaN;
          return [
            line(own, 'retrysafe', [row ? n2(ratiosOf(row, op).r1Fair) : 'n/a', n2(cpuRatio)]),
            line(same, 'bare + the same calls', ['', '']),
          ];
        }),
      ),
    ),
  );
  out.push('');
  return out;
};
