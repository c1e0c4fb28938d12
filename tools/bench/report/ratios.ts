// The ratios behind R1, R2 and R4 at each concurrency, what the clock and the time budget
// did to them, and the latency chart.
import { clockTrouble, type OperationRatios, type RatioRow } from '../results.js';
import { TARGETS } from '../verdicts.js';
import { clocksOf, type Section } from './context.js';
import { activities, check, n2, table } from './format.js';
import { label, operationsOf, ratiosOf } from './kinds.js';

export const ratios: Section = ({ r, files, cs }) => {
  const ops = operationsOf(r);
  const fair = ops.filter((op) => op.fair);
  const out = ['## Ratios (and their targets)', ''];
  out.push(
    'R1 = retrysafe operations/s ÷ bare-Temporal workflows/s with the same number of activities, both at the same ' +
      "concurrency c; operations/s is the closed loop's steady-state rate c ÷ mean latency (Little's law), which a " +
      "batch's ramp-up and drain do not bias (completed ÷ wall time is shown for context); " +
      'R2 = retrysafe latency ÷ bare latency; R4 = replay p50 ÷ plain Fastify endpoint p50. ' +
      'Each ratio divides two numbers measured in this run, interleaved (ABBA rounds).' +
      (fair.length
        ? " R1′ = the same ÷ bare-Temporal workflows/s making the operation's own keyed HTTP calls to the same sandboxes " +
          '(the same activities, keys and timeouts, as local activities) and nothing else: the same work without ' +
          "retrysafe's API, books and compensations."
        : ''),
  );
  out.push('');
  const row = (name: string, pick: (x: RatioRow) => number, target: string) => [
    name,
    ...r.ratios.map((x) => n2(pick(x))),
    target,
  ];
  const of = (op: (typeof ops)[number], k: keyof OperationRatios) => (x: RatioRow) => ratiosOf(x, op)[k];
  const rows = [
    ...ops.map((op) => row(`R1 ${op.own} ÷ bare ${activities(op.activities)} (ops/s)`, of(op, 'r1'), `≥ ${TARGETS.r1}`)),
    ...fair.map((op) => row(`R1′ ${op.own} ÷ bare + the same HTTP calls (ops/s)`, of(op, 'r1Fair'), `≥ ${TARGETS.r1Fair}`)),
    ...ops.map((op) => row(`R1 ${op.own}, completed ÷ wall time (context)`, of(op, 'r1Wall'), '—')),
    ...fair.map((op) => row(`R1′ ${op.own}, completed ÷ wall time (context)`, of(op, 'r1FairWall'), '—')),
    ...ops.flatMap((op) => [
      row(`R2 ${op.own} p50`, of(op, 'r2p50'), '—'),
      row(`R2 ${op.own} p99`, of(op, 'r2p99'), `≤ ${TARGETS.r2p99}`),
    ]),
    ...fair.map((op) => row(`R2′ ${op.own} p50 ÷ bare + the same HTTP calls (context)`, of(op, 'r2FairP50'), '—')),
    row('R4 replay p50 ÷ plain p50', (x) => x.r4, `≤ ${TARGETS.r4}`),
    row('R4 at p99 (context)', (x) => x.r4P99, '—'),
    row("R4 from mean latency (Little's law, context)", (x) => x.r4Mean, '—'),
  ];
  out.push(table(['ratio', ...cs.map((c) => `c=${c}`), 'target'], rows));
  out.push('');
  const r4s = r.ratios.map((x) => x.r4).filter(Number.isFinite);
  const r4Worst = r4s.length ? Math.max(...r4s) : Number.NaN;
  out.push(
    `R4 (worst over c): ${n2(r4Worst)} against its target ≤ ${TARGETS.r4}: ${check(r4Worst <= TARGETS.r4)}. ` +
      `Bare baselines in this run: ${r.activityKind?.used ?? 'regular'} activities.`,
  );
  out.push('');
  const troubled = r.scenarios.filter((s) => clockTrouble(s));
  if (troubled.length) {
    out.push(
      `**Clock**: in ${troubled.map((s) => `${label(s.kind)} c=${s.concurrency}`).join(', ')} more than a fifth of the latency ` +
        'samples read ≤ 0 ms: the monotonic clock stood still across loopback round trips (this VM, under load). Their ' +
        'percentiles are not measurements, so R4 is not computed there ("n/a"); the mean latencies from throughput ' +
        '(Little\'s law, "R4 from mean latency") do not depend on the clock.',
    );
    out.push('');
  }
  const worstClock = clocksOf(r).reduce((a, c) => (c.stalledShare > a.stalledShare ? c : a));
  if (worstClock.stalledShare > 0.05) {
    out.push(
      `**Clock warning**: this machine's monotonic clock stood still in ${(worstClock.stalledShare * 100).toFixed(0)}% of ` +
        `back-to-back reads and moved in steps of up to ${worstClock.maxStepMs.toFixed(1)} ms, so single sub-millisecond ` +
        'latencies (replays, the plain endpoint) read as 0 or as a step; their percentiles are unreliable in this run. ' +
        'The mean latencies from throughput (Little\'s law) do not depend on it: see "R4 from mean latency".',
    );
    out.push('');
  }
  if (r.skipped.length) {
    out.push(`**Time budget ran out** (a busy machine): left out ${r.skipped.join(', ')}.`);
    out.push('');
  }
  out.push(`![latency chart](${files.png ?? files.svg})`);
  if (!files.png) out.push('', `_PNG not rendered: ${r.chart.pngNote}. The SVG above is the chart._`);
  out.push('');
  return out;
};
