// The Markdown report of a run, from its results JSON alone: verdicts and ratios first, then
// one section per phase that measured something, the machine, the versions and the flags.
// A section is a function of the results that prints nothing when the run has no input for
// it; SECTIONS is the report's order. Tables are columns: a head and how a row fills it.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeChart } from './chart.js';
import { ratio, type ScenarioResult } from './load.js';
import type { ClockHealth } from './meter.js';
import { PEER_OPERATION } from './peers/contract.js';
import { PEER_NAMES } from './peers/index.js';
import { ALL_ON } from './phases/ablation.js';
import type { ContentionTrial } from './phases/contention.js';
import type { Timeline } from './phases/histories.js';
import { AS_SHIPPED, type Answers, type OverloadResult, type OverloadRow } from './phases/overload.js';
import {
  activities,
  clockTrouble,
  computeRatios,
  cpuPerOp,
  cpuVsSameWork,
  find,
  kindFacts,
  label,
  n1,
  n2,
  ratiosOf,
  resultsJson,
  systemCpu,
  type BenchResults,
  type KindFacts,
  type OperationRatios,
  type RatioRow,
} from './results.js';
import { ROOT } from './stack.js';
import { computeVerdicts, TARGETS, type Met } from './verdicts.js';
import type { OperationKinds } from './workload.js';

interface Ctx {
  r: BenchResults;
  /** The file name stem: the JSON and the chart beside the report. */
  name: string;
  /** The run's concurrencies, in the order of its ratios. */
  cs: number[];
  ops: readonly OperationKinds[];
}

type Section = (ctx: Ctx) => string[];
type Cell = string | number;

// One rounding per kind of figure, so the same number reads the same in every section.
/** Milliseconds: whole from 100, one decimal from 10, two below (1729, 73.2, 0.87). */
const ms = (v?: number) =>
  v === undefined || !Number.isFinite(v) ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
const check = (ok: boolean) => (ok ? '✅' : '❌');
const pct = (s?: ScenarioResult) => (s ? `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p95)} / ${ms(s.latencyMs.p99)}` : 'n/a');
const p5099 = (l?: { p50: number; p99: number }) => (l ? `${ms(l.p50)} / ${ms(l.p99)}` : 'n/a');
const steady = (s?: ScenarioResult) => n1(s?.steadyOpsPerSec);
/** `k v, k v`: a record's entries. */
const kv = (r: Record<string, unknown>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
/** The text and a blank line when `on`, else nothing. */
const para = (on: unknown, text: () => string) => (on ? [text(), ''] : []);
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${n}×${k}`)
    .join(', ');

export function table(head: string[], rows: Cell[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
}

/** A table of `rows`, one column per [head, cell]. */
const columns = <R>(rows: R[], cols: Array<[string, (row: R) => Cell]>) =>
  table(
    cols.map(([head]) => head),
    rows.map((row) => cols.map(([, cell]) => cell(row))),
  );

/** Temporal RPCs per operation, in all and by method. */
function rpcsPerOp(s: ScenarioResult): string {
  const entries = Object.entries(s.usage.rpcs);
  if (entries.length === 0) return '0';
  const total = entries.reduce((a, [, v]) => a + v, 0);
  return `${n2(total / s.ops)} (${entries.map(([m, v]) => `${m} ${n2(v / s.ops)}`).join(', ')})`;
}

const PART_LABEL: Record<string, string> = {
  orchestrator: 'bench (Temporal client)',
  baselineWorker: 'worker',
  postgres: 'PostgreSQL',
};
const partLabel = (p: string) => PART_LABEL[p] ?? p;

const clocksOf = (r: BenchResults): ClockHealth[] => [r.machine.clock.start, r.machine.clock.end].filter((c) => c !== undefined);

const header: Section = ({ r, name }) => [
  `# retrysafe benchmark — ${r.name}`,
  '',
  `\`${r.command}\` · mode **${r.mode}** · started ${r.startedAt} · took ${(r.durationMs / 1000).toFixed(0)} s · ` +
    `${r.machine.cores} cores, ${r.machine.cpuModel} · **load average ${r.machine.loadAverage}** at the start` +
    `${r.machine.loadAverageEnd ? `, ${r.machine.loadAverageEnd} at the end` : ''} (1, 5, 15 min; above ${r.machine.cores} every process here waited for a core). ` +
    `Raw numbers: [${name}.json](${name}.json).` +
    '',
  ...(r.mode === 'default'
    ? []
    : [
        `> **A ${r.mode} run**: fewer operations and one round per concurrency, so its figures are indicative. ` +
          'The report to quote is a full `npm run bench -- --peers` on a quiet machine.',
        '',
      ]),
];

const MET: Record<Met, string> = {
  moonshot: '🌙 moonshot',
  target: '✅ target',
  missed: '❌ missed',
  'not measured': '— not measured',
};

const verdicts: Section = ({ r }) => [
  '## Verdicts',
  '',
  r.scenarios.length === 0
    ? "Each computed from this run's own numbers: the overload section alone (`--overload`), its targets as shipped."
    : "Each computed from this run's own numbers" +
      (r.peers ? '' : '; the peers are not in this run (`npm run bench -- --peers`)') +
      `. Bare baselines: ${r.activityKind?.used} activities (${r.activityKind?.how}). What each figure divides by: docs/benchmarks.md.`,
  '',
  columns(r.verdicts, [
    ['figure', (v) => v.figure],
    ['now', (v) => v.now],
    ['target', (v) => v.target],
    ['moonshot', (v) => v.moonshot],
    ['verdict', (v) => MET[v.met]],
    ['from', (v) => v.note ?? ''],
  ]),
  '',
];

/** The notes under the ratios: R4's worst, the clock, the time budget, and the latency chart. */
function ratioNotes({ r, name }: Ctx): string[] {
  const r4s = r.ratios.map((x) => x.r4).filter(Number.isFinite);
  const r4Worst = r4s.length ? Math.max(...r4s) : Number.NaN;
  const troubled = r.scenarios.filter((s) => clockTrouble(s));
  const worstClock = clocksOf(r).reduce((a, c) => (c.stalledShare > a.stalledShare ? c : a));
  return [
    `R4 (worst over c): ${n2(r4Worst)} against its target ≤ ${TARGETS.r4}: ${check(r4Worst <= TARGETS.r4)}. Bare baselines in this run: ${r.activityKind?.used} activities.`,
    '',
    ...para(
      troubled.length > 0,
      () =>
        `**Clock**: in ${troubled.map((s) => `${label(s.kind)} c=${s.concurrency}`).join(', ')} more than a fifth of the latency samples read ≤ 0 ms: ` +
        'the monotonic clock stood still across loopback round trips (this VM, under load). Their percentiles are not measurements, so R4 is not ' +
        'computed there ("n/a"); the mean latencies from throughput (Little\'s law, "R4 from mean latency") do not depend on the clock.',
    ),
    ...para(
      worstClock.stalledShare > 0.05,
      () =>
        `**Clock warning**: this machine's monotonic clock stood still in ${(worstClock.stalledShare * 100).toFixed(0)}% of back-to-back reads and moved ` +
        `in steps of up to ${worstClock.maxStepMs.toFixed(1)} ms, so single sub-millisecond latencies (replays, the plain endpoint) read as 0 or as a step; ` +
        'their percentiles are unreliable in this run. The mean latencies from throughput (Little\'s law) do not depend on it: see "R4 from mean latency".',
    ),
    ...para(r.skipped.length > 0, () => `**Time budget ran out** (a busy machine): left out ${r.skipped.join(', ')}.`),
    `![latency chart](${name}.svg)`,
    '',
  ];
}

const ratios: Section = (ctx) => {
  const { r, cs, ops } = ctx;
  const row = (name: string, pick: (x: RatioRow, c: number) => number, target: string): Cell[] => [
    name,
    ...r.ratios.map((x) => n2(pick(x, x.concurrency))),
    target,
  ];
  const of = (op: OperationKinds, k: keyof OperationRatios) => (x: RatioRow) => ratiosOf(x, op)[k];
  return [
    '## Ratios (and their targets)',
    '',
    "Each ratio divides two numbers of this run, measured interleaved (ABBA rounds); ops/s is the closed loop's c ÷ mean latency " +
      "(Little's law). R1: ÷ bare Temporal with as many no-op activities; R1′, R2′ and CPU ÷ same work: ÷ bare Temporal making the " +
      "same keyed HTTP calls; R2: latency ÷ bare; R4: replay p50 ÷ a plain Fastify endpoint's (docs/benchmarks.md).",
    '',
    table(
      ['ratio', ...cs.map((c) => `c=${c}`), 'target'],
      [
        ...ops.map((op) => row(`R1 ${op.own} ÷ bare ${activities(op.activities)} (ops/s)`, of(op, 'r1'), `≥ ${TARGETS.r1}`)),
        ...ops.map((op) => row(`R1′ ${op.own} ÷ bare + the same HTTP calls (ops/s)`, of(op, 'r1Fair'), `≥ ${TARGETS.r1Fair}`)),
        ...ops.map((op) =>
          row(`CPU ${op.own} ÷ same work (all processes)`, (_, c) => cpuVsSameWork(r, op, c), `≤ ${TARGETS.cpuVsFair}`),
        ),
        ...ops.map((op) => row(`R1 ${op.own}, completed ÷ wall time (context)`, of(op, 'r1Wall'), '—')),
        ...ops.map((op) => row(`R1′ ${op.own}, completed ÷ wall time (context)`, of(op, 'r1FairWall'), '—')),
        ...ops.flatMap((op) => [
          row(`R2 ${op.own} p50`, of(op, 'r2p50'), '—'),
          row(`R2 ${op.own} p99`, of(op, 'r2p99'), `≤ ${TARGETS.r2p99}`),
        ]),
        ...ops.map((op) => row(`R2′ ${op.own} p50 ÷ bare + the same HTTP calls (context)`, of(op, 'r2FairP50'), '—')),
        row('R4 replay p50 ÷ plain p50', (x) => x.r4, `≤ ${TARGETS.r4}`),
        row('R4 at p99 (context)', (x) => x.r4P99, '—'),
        row("R4 from mean latency (Little's law, context)", (x) => x.r4Mean, '—'),
      ],
    ),
    '',
    ...ratioNotes(ctx),
  ];
};

const newOperations: Section = ({ r, cs, ops }) => [
  '## 1–2. New operations vs bare Temporal',
  '',
  'From the first POST to the terminal answer (202s polled); bare workflows are started and awaited by the bench process, the same ' +
    "work's as local activities making the operation's own keyed HTTP calls, without retrysafe's API, books and compensations.",
  ...ops.flatMap((op) => {
    const rows = cs.map((c) => {
      const [own, bare, fair] = [op.own, op.bare, op.fair].map((k) => find(r.scenarios, k, c));
      return {
        c,
        x: ratiosOf(
          r.ratios.find((row) => row.concurrency === c),
          op,
        ),
        own,
        bare,
        fair,
        all: [own, bare, fair],
      };
    });
    type Row = (typeof rows)[number];
    return [
      '',
      `### ${op.own} vs bare workflow with ${activities(op.activities, 'no-op ')}`,
      '',
      columns(rows, [
        ['c', (x: Row) => x.c],
        ['R1', (x) => n2(x.x.r1)],
        ['R2 p50', (x) => n2(x.x.r2p50)],
        ['R2 p99', (x) => n2(x.x.r2p99)],
        [`${op.own} ops/s`, (x) => steady(x.own)],
        ['bare ops/s', (x) => steady(x.bare)],
        ['same work ops/s', (x) => steady(x.fair)],
        [`${op.own} p50 / p95 / p99 ms`, (x) => pct(x.own)],
        ['bare p50 / p95 / p99 ms', (x) => pct(x.bare)],
        ['same work p50 / p95 / p99 ms', (x) => pct(x.fair)],
        ['n (each)', (x) => x.all.map((s) => s?.ops ?? 0).join(' / ')],
        ['errors', (x) => x.all.map((s) => s?.errors ?? 0).join(' / ')],
        ['202s', (x) => x.own?.answered202 ?? 0],
        ['503s retried', (x) => x.own?.retried503 ?? 0],
      ]),
    ];
  }),
  '',
  ...para(
    r.scenarios.some((s) => s.errors > 0),
    () =>
      `Errors: ${r.scenarios.flatMap((s) => (s.errors ? [`${s.kind} c=${s.concurrency}: ${s.errorSamples.join('; ')}`] : [])).join(' · ')}`,
  ),
];

const gap: Section = ({ r, cs, ops }) => {
  // The layered batches run together, in the first round, in the modes that have them.
  if (!r.scenarios.some((s) => ops.some((op) => s.kind === op.direct))) return [];
  const allCpu = (x?: ScenarioResult) => (x ? Object.values(x.usage.cpuMs).reduce((a, b) => a + b, 0) / x.ops : Number.NaN);
  const rows = ops.flatMap((op) =>
    cs.map((c) => ({ op, c, s: [op.bare, op.tracked, op.direct, op.own].map((k) => find(r.scenarios, k, c)) })),
  );
  return [
    '### Where the gap is: bookkeeping, saga, API',
    '',
    "One layer at a time, in the first round: bare → + bookkeeping (retrysafe's memo and search-attribute upserts) → no API " +
      "(retrysafe's workflow from a Temporal client with the API's start options) → retrysafe.",
    '',
    columns(rows, [
      ['operation', (x) => x.op.own],
      ['c', (x) => x.c],
      ['ops/s: bare → + bookkeeping → no API → retrysafe', (x) => x.s.map(steady).join(' → ')],
      ['p50 / p99 ms: bare', (x) => p5099(x.s[0]?.latencyMs)],
      ['+ bookkeeping', (x) => p5099(x.s[1]?.latencyMs)],
      ['no API', (x) => p5099(x.s[2]?.latencyMs)],
      ['retrysafe', (x) => p5099(x.s[3]?.latencyMs)],
      ['CPU ms/op (all processes): bare → + bookkeeping → no API → retrysafe', (x) => x.s.map((s) => n1(allCpu(s))).join(' → ')],
    ]),
    '',
  ];
};

const replays: Section = ({ r, cs }) => {
  const at = (c: number) => ['replay', 'plain', 'replay-uncached'].map((k) => find(r.scenarios, k, c));
  const row = (c: number) => r.ratios.find((x) => x.concurrency === c);
  return [
    '## 3. Replays vs a plain Fastify endpoint',
    '',
    "Retries of finished payments answered from the API's cache, beside a Fastify route sending a cached body of the same size; " +
      '"no cache": a second API with `RETRYSAFE_CACHE_SIZE=0`.',
    '',
    columns(cs, [
      ['c', (c) => c],
      ['R4 (p50)', (c) => n2(row(c)?.r4)],
      ['p99 ratio', (c) => n2(row(c)?.r4P99)],
      ['replay req/s', (c) => n1(at(c)[0]?.opsPerSec)],
      ['plain req/s', (c) => n1(at(c)[1]?.opsPerSec)],
      ['replay p50 / p95 / p99 ms', (c) => pct(at(c)[0])],
      ['plain p50 / p95 / p99 ms', (c) => pct(at(c)[1])],
      ['no cache p50 / p95 / p99 ms', (c) => pct(at(c)[2])],
      ['Temporal RPCs per replay', (c) => (at(c)[0] ? rpcsPerOp(at(c)[0]!) : 'n/a')],
      ['per uncached replay', (c) => (at(c)[2] ? rpcsPerOp(at(c)[2]!) : 'n/a')],
    ]),
    '',
  ];
};

const contention: Section = ({ r }) => {
  const moves = (t: ContentionTrial) => Object.entries(t.effects ?? {}).filter(([what]) => what.startsWith('account '));
  return [
    `## 4. Contention: ${r.contention[0]?.requests ?? 100} identical concurrent requests for one new key`,
    '',
    "Executions: runs of the workflow ID in visibility; claims won: the API's `retrysafe_operations_started_total`; charges and " +
      "units: what moved on the trial's own accounts (one figure each, in step order) and SKU ÷ one operation's; winner: the answer " +
      'without `Idempotent-Replayed`.',
    '',
    columns(r.contention, [
      ['type', (t) => t.type],
      ['executions', (t) => t.executions],
      ['claims won', (t) => t.claimsWon],
      [
        'charges',
        (t) =>
          moves(t).length
            ? moves(t)
                .map(([, n]) => n)
                .join(' · ')
            : t.charges,
      ],
      ['units held', (t) => t.unitsTaken ?? '—'],
      ['answers', (t) => counts(t.statuses)],
      ['503s retried', (t) => t.retried503],
      ['winners', (t) => t.winners],
      ['distinct outcomes', (t) => t.distinctOutcomes],
      ['winner ms', (t) => ms(t.winnerLatencyMs)],
      ['waiters p50 / p99 ms', (t) => p5099(t.waiterLatencyMs)],
      ['waiter p50 ÷ winner', (t) => n2(t.waiterOverWinner)],
      ['API RPCs in the burst', (t) => kv(t.usage.rpcs)],
    ]),
    '',
  ];
};

/** Each kind at each concurrency, in the order `outer` names: a table's rows. */
const kindRows = (r: BenchResults, kinds: readonly string[], cs: number[], outer: 'kind' | 'c') =>
  (outer === 'kind'
    ? kinds.flatMap((k) => cs.map((c) => [k, c] as const))
    : cs.flatMap((c) => kinds.map((k) => [k, c] as const))
  ).map(([kind, c]) => ({ kind, c, s: find(r.scenarios, kind, c) }));

const peers: Section = ({ r, cs, ops }) => {
  if (!r.peers?.length) return [];
  const raced = ops.find((op) => op.own === PEER_OPERATION);
  const systems = [...(raced ? [raced.own, raced.fair!, raced.bare] : []), ...r.peers.map((p) => p.peer)].filter((k) =>
    r.scenarios.some((s) => s.kind === k),
  );
  const replayKinds = [`replay-${PEER_OPERATION}`, ...r.peers.map((p) => `replay-${p.peer}`)];
  type Row = ReturnType<typeof kindRows>[number];
  return [
    '## 5. The peers: the same checkout on Restate and on DBOS Transact',
    '',
    "Each peer runs retrysafe's checkout saga (tools/bench/peers: same request, same derived keys, compensations registered " +
      "first) against this run's sandboxes, behind the same HTTP contract, driven by the same client interleaved with retrysafe's " +
      "batches. CPU: every process doing the checkout's work ÷ checkouts (by process: section 8).",
    '',
    columns(kindRows(r, systems, cs, 'c'), [
      ['system', (x: Row) => label(x.kind)],
      ['c', (x) => x.c],
      ['ops/s', (x) => steady(x.s)],
      ['p50 / p95 / p99 ms', (x) => pct(x.s)],
      ['n', (x) => x.s?.ops ?? 0],
      ['errors', (x) => x.s?.errors ?? 0],
      ['CPU ms/checkout', (x) => n1(x.s ? systemCpu(x.s) : Number.NaN)],
    ]),
    '',
    'Replays (a retry of a finished checkout, same key and body):',
    '',
    columns(kindRows(r, replayKinds, cs, 'c'), [
      ['system', (x: Row) => label(x.kind)],
      ['c', (x) => x.c],
      ['req/s', (x) => n1(x.s?.opsPerSec)],
      ['p50 / p95 / p99 ms', (x) => pct(x.s)],
      ["mean (Little's law) ms", (x) => ms(x.s?.littleMeanMs)],
      ['n', (x) => x.s?.ops ?? 0],
      ['errors', (x) => x.s?.errors ?? 0],
    ]),
    '',
    columns(r.peers, [
      ['peer', (p) => p.peer],
      ['versions', (p) => kv(p.versions)],
      ['durability (set, and checked where the engine can be asked)', (p) => p.durability.join('; ')],
      ['processes', (p) => p.processes.join(', ')],
    ]),
    '',
  ];
};

/** One operation's phases inside Temporal beside the same work's and the floor's. */
function phases({ r, cs }: Ctx, op: OperationKinds, a: Timeline): string[] {
  const others = [op.fair, op.bare].map((k) => r.timeline?.find((t) => t.kind === k)).filter((t) => t !== undefined);
  const all = [a, ...others];
  const bare = r.timeline?.find((t) => t.kind === op.bare);
  const names = [...new Set(all.flatMap((t) => t.phases.map((p) => p.phase)))];
  const value = (t: Timeline, phase: string) => ms(t.phases.find((x) => x.phase === phase)?.medianMs).replace('n/a', '—');
  const stepLabel = (phase: string) => {
    const i = Number(/^step (\d+)/.exec(phase)?.[1] ?? 0) - 1;
    return i < 0 ? phase : `${phase} — ${a.stepNames[i] ?? '?'}${bare?.stepNames[i] ? ` / ${bare.stepNames[i]}` : ''}`;
  };
  const p50 = (t: Timeline) => find(r.scenarios, t.kind, cs[0]!)?.latencyMs.p50 ?? Number.NaN;
  return [
    `### ${op.own} vs ${others.map((t) => label(t.kind)).join(' and ')} (${r.activityKind?.used} activities), ms`,
    '',
    table(
      ['phase', ...all.map((t) => label(t.kind))],
      [
        ...names.map((ph) => [stepLabel(ph), ...all.map((t) => value(t, ph))]),
        ['start → close (in the history)', ...all.map((t) => ms(t.startToCloseMs))],
        ['workflow tasks per operation', ...all.map((t) => t.workflowTasks)],
        [`client end-to-end p50, c=${cs[0]}`, ...all.map((t) => ms(p50(t)))],
        // What the client waited beyond the history: the API, the start RPC and fetching the result.
        ['outside the history (API, start RPC, result)', ...all.map((t) => ms(p50(t) - t.startToCloseMs))],
      ],
    ),
    '',
  ];
}

const timeGoes: Section = (ctx) => {
  const { r, cs, ops } = ctx;
  if (!r.timeline?.length) return [];
  return [
    '## 6. Where the time goes',
    '',
    `Medians over the histories of ${r.timeline[0]!.sampled} operations per kind at c=${cs[0]}, per phase (rows need not add up): ` +
      'a local activity runs inside its workflow task, from its start or the previous completion to its marker; "outside the ' +
      'history" is the client\'s p50 minus start → close.',
    '',
    // The saga with the most steps first: it shows the most phases.
    ...[...ops]
      .sort((a, b) => b.activities - a.activities)
      .flatMap((op) => {
        const a = r.timeline?.find((t) => t.kind === op.own);
        return a ? phases(ctx, op, a) : [];
      }),
  ];
};

const history: Section = ({ r, ops }) => {
  const hist = (k?: string) => r.history.find((h) => h.kind === k);
  const diff = (a?: number, b?: number) =>
    a === undefined || b === undefined ? '—' : `${a - b >= 0 ? '+' : ''}${a - b} (×${n2(a / b)})`;
  // Each kind beside the one it is compared with (none: a baseline itself).
  const pairs = [
    ...ops.map((op) => [op.own, op.bare]),
    ...ops.map((op) => [op.fair, op.bare]),
    ...ops.map((op) => [op.tracked, op.bare]),
    ...ops.map((op) => [op.bare, undefined]),
  ].filter(([k], i, all) => hist(k) && all.findIndex(([x]) => x === k) === i);
  const rows = pairs.map(([k, b]) => ({ h: hist(k)!, b: hist(b) }));
  return [
    '## 7. State transitions and history per operation',
    '',
    'Medians over a sample of executions from this run (DescribeWorkflowExecution: `stateTransitionCount`, `historyLength`, `historySizeBytes`).',
    '',
    columns(rows, [
      ['operation', (x) => label(x.h.kind)],
      ['state transitions', (x) => x.h.stateTransitions],
      ['vs bare', (x) => diff(x.h.stateTransitions, x.b?.stateTransitions)],
      ['history events', (x) => x.h.historyEvents],
      ['vs bare', (x) => diff(x.h.historyEvents, x.b?.historyEvents)],
      ['history bytes', (x) => x.h.historyBytes],
      ['vs bare', (x) => diff(x.h.historyBytes, x.b?.historyBytes)],
      ['sampled', (x) => x.h.sampled],
    ]),
    '',
    'Event types in one history of each:',
    '',
    table(
      ['event type', ...r.history.map((h) => label(h.kind))],
      [...new Set(r.history.flatMap((h) => Object.keys(h.events)))].map((t) => [t, ...r.history.map((h) => h.events[t] ?? 0)]),
    ),
    '',
  ];
};

/** The per-process columns of section 8: a scenario's value when the process is one it is metered by. */
const PROCESS_COLUMNS: Array<[string, (f: KindFacts) => string | undefined]> = [
  ['API', (f) => f.api],
  ['worker', (f) => f.worker],
  ...['temporal', 'bank', 'reservations'].map((p): [string, (f: KindFacts) => string | undefined] => [
    p === 'temporal' ? 'Temporal' : p,
    (f) => (f.worker ? p : f.parts.find((x) => x === p)),
  ]),
  ['bench (client)', (f) => (f.worker ? 'orchestrator' : undefined)],
  ...['restate-server', 'restate-service', 'postgres', 'dbos-service'].map(
    (p): [string, (f: KindFacts) => string | undefined] => [partLabel(p), (f) => f.parts.find((x) => x === p)],
  ),
];

const usage: Section = ({ r }) => {
  const share = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(0)}%` : 'n/a');
  const at = (s: ScenarioResult) => `${label(s.kind)} c=${s.concurrency}`;
  const capped = r.scenarios.filter((s) => s.batchesCappedByTime > 0);
  const clock = r.scenarios.filter((s) => s.nonPositiveSamples > 0);
  const peerRows = r.scenarios.some((s) => (PEER_NAMES as readonly string[]).includes(s.kind));
  const cols = PROCESS_COLUMNS.filter(
    ([head]) => peerRows || !['restate-server', 'restate-service', 'PostgreSQL', 'dbos-service'].includes(head),
  );
  return [
    '## 8. CPU time and peak memory per operation',
    '',
    'User + system CPU of each process over the scenario (/proc, all threads; PostgreSQL with its backends) ÷ operations; peak: VmHWM' +
      `${r.scenarios.every((s) => s.usage.peakReset) ? ', reset at its start' : ' since start (could not be reset)'}. "All": the processes ` +
      'doing the work (a bare workflow\'s include its client, the bench); "all ours": every process of the run; "not ours": the share ' +
      "of the machine's busy time spent outside this run.",
    '',
    columns(r.scenarios, [
      ['scenario', (s) => label(s.kind)],
      ['c', (s) => s.concurrency],
      ['all ms/op', (s) => (kindFacts(s.kind).parts.length ? n2(systemCpu(s)) : '')],
      ...cols.map(([head, proc]): [string, (s: ScenarioResult) => Cell] => [
        `${head} ms/op`,
        (s) => (proc(kindFacts(s.kind)) ? n2(cpuPerOp(s, proc(kindFacts(s.kind))!)) : ''),
      ]),
      ['worker peak MiB', (s) => (kindFacts(s.kind).worker ? n1(s.usage.peakRssMb[kindFacts(s.kind).worker!]) : '')],
      ['all ours ms/op', (s) => n2(Object.values(s.usage.cpuMs).reduce((a, v) => a + v, 0) / s.ops)],
      ['API Temporal RPCs/op', (s) => (kindFacts(s.kind).apiRpcs ? rpcsPerOp(s) : '—')],
      ['machine busy', (s) => share(s.usage.machineBusyMs, s.usage.capacityMs)],
      ['of it not ours', (s) => share(s.usage.foreignMs, s.usage.machineBusyMs)],
    ]),
    '',
    ...para(
      clock.length,
      () =>
        `Clock: ${clock.map((s) => `${at(s)}: ${s.nonPositiveSamples}`).join(', ')} latency samples were ≤ 0 ms (the monotonic clock did not ` +
        'advance across a loopback round trip, as happens on this VM under load); they are kept in the percentiles.',
    ),
    ...para(
      capped.length,
      () =>
        `Time-bounded batches (the count was not reached within the batch's time bound, ${(r.settings.batchMaxMs / 1000).toFixed(0)} s for new ` +
        `operations; n is what finished): ${capped.length === r.scenarios.length ? 'all' : capped.map(at).join(', ')}.`,
    ),
  ];
};

const ablation: Section = ({ r }) => {
  const a = r.ablation;
  if (!a) return [];
  const base = a.rows.find((x) => x.name === ALL_ON);
  // " (×1.17 worse)": the row's value ÷ the first row's, named when it moved by 15 % or more.
  const delta = (v: number, b: number | undefined, lowerIsBetter: boolean) => {
    const x = ratio(v, b);
    if (!Number.isFinite(x)) return '';
    return ` (×${n2(x)}${Math.abs(x - 1) >= 0.15 ? ((lowerIsBetter ? x > 1 : x < 1) ? ' worse' : ' better') : ''})`;
  };
  const numbers = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
  type Row = (typeof a.rows)[number];
  return [
    "## 9. Ablation of the embedded server's tuning",
    '',
    `Each row a fresh engine on this run's sandboxes, the run's own stopped: ${a.counts.opsC1} ${a.operation}s and as many bare ` +
      `${numbers[a.steps] ?? a.steps}-step workflows at c=1, ${a.counts.opsC32} of each at c=32, after ${a.counts.warmupOps} to warm ` +
      `up. Settings from ${a.tuningSource}.`,
    '',
    columns(a.rows, [
      ['server', (x: Row) => x.name],
      [`${a.operation} c=1 p50 ms`, (x) => `${ms(x.checkout.c1P50Ms)}${delta(x.checkout.c1P50Ms, base?.checkout.c1P50Ms, true)}`],
      [
        `${a.operation} c=32 ops/s`,
        (x) => `${n1(x.checkout.c32OpsPerSec)}${delta(x.checkout.c32OpsPerSec, base?.checkout.c32OpsPerSec, false)}`,
      ],
      ['bare c=1 p50 ms', (x) => `${ms(x.bare.c1P50Ms)}${delta(x.bare.c1P50Ms, base?.bare.c1P50Ms, true)}`],
      ['bare c=32 ops/s', (x) => `${n1(x.bare.c32OpsPerSec)}${delta(x.bare.c32OpsPerSec, base?.bare.c32OpsPerSec, false)}`],
      ['n (c=1 / c=32)', (x) => `${x.checkout.n.c1}+${x.bare.n.c1} / ${x.checkout.n.c32}+${x.bare.n.c32}`],
      ['errors', (x) => x.checkout.errors + x.bare.errors],
    ]),
    '',
    ...para(
      a.skipped.length,
      () =>
        `**Ablation time budget ran out** (${(a.counts.budgetMs / 60_000).toFixed(0)} min): left out ${a.skipped.join('; ')}.`,
    ),
    columns(a.settings, [
      ['setting', (t) => t.name],
      ['arguments', (t) => `\`${t.args.join(' ')}\``],
      ['why', (t) => t.why],
    ]),
    '',
    '(×: the row ÷ the first row; "worse"/"better" when it moved by 15 % or more.)',
    '',
  ];
};

/** `1200×200, 340×503 engine_busy`: a tenant's answers, most frequent first. */
const answers = (a: Answers) => counts(Object.fromEntries(Object.entries(a).sort(([, x], [, y]) => y - x))) || '—';

function overloadTables(o: OverloadResult): string[] {
  const { flood, steady } = o.tenants;
  const floods = o.rows.flatMap((row) => row.floods.map((f) => ({ row, f })));
  type F = (typeof floods)[number];
  return [
    columns(floods, [
      ['configuration', (x: F) => x.row.name],
      [`${flood} c`, (x) => x.f.concurrency],
      [`${steady} p50 / p99 ms alone`, (x) => p5099(x.row.idle.latencyMs)],
      ['during the flood', (x) => p5099(x.f.b.latencyMs)],
      ['n', (x) => x.f.b.ended],
      ['p50 ×', (x) => n2(ratio(x.f.b.latencyMs.p50, x.row.idle.latencyMs.p50))],
      ['p99 ×', (x) => n2(ratio(x.f.b.latencyMs.p99, x.row.idle.latencyMs.p99))],
      [`${flood} goodput/s`, (x) => n1(x.f.aGoodput)],
      ['c=32 throughput/s', (x) => n1(x.row.reference.opsPerSec)],
      ['goodput ÷ c=32', (x) => n2(ratio(x.f.aGoodput, x.row.reference.opsPerSec))],
      [`${flood}'s answers`, (x) => answers(x.f.a.answers)],
      [`${steady}'s answers`, (x) => answers(x.f.b.answers)],
      ['errors', (x) => `${x.f.a.errors} / ${x.f.b.errors}`],
    ]),
    '',
    `Targets (${AS_SHIPPED}): \`${steady}\`'s p50 during the flood ≤ 2× alone (moonshot 1.2×), \`${flood}\`'s goodput ≥ 90% of the c=32 ` +
      `throughput. With a rate for \`${flood}\` its goodput is bounded by that rate by design.`,
    '',
    "After each configuration, read back: every operation a 200 or 202 accepted, each tenant's account at the bank, and every answer either tenant got.",
    '',
    columns(o.rows, [
      ['configuration', (x: OverloadRow) => x.name],
      ['tenant limits', (x) => (x.tenantLimits ? `\`${x.tenantLimits}\`` : 'none (default)')],
      ['accepted', (x) => x.audit.accepted],
      ['terminal', (x) => x.audit.terminal],
      ['succeeded', (x) => x.audit.succeeded],
      [
        'bank moved = successes × amount',
        (x) =>
          x.audit.accounts
            .map((a) => `${a.tenant} ${a.moved === a.expected ? '✅' : `❌ ${a.moved} ≠ ${a.expected}`}`)
            .join(', '),
      ],
      ['dishonest answers', (x) => (x.audit.badAnswers ? `${x.audit.badAnswers} (${x.audit.badSamples.join(', ')})` : '0')],
      ['nothing lost or doubled', (x) => check(x.audit.ok)],
    ]),
    '',
  ];
}

const overload: Section = ({ r }) => {
  const o = r.overload;
  if (!o) return [];
  const { flood, steady } = o.tenants;
  const c = o.counts;
  const problems = o.rows.flatMap((row) => row.audit.problems.map((p) => `${row.name}: ${p}`));
  const errors = o.rows.flatMap((row) =>
    row.floods.flatMap((f) => [...f.a.errorSamples, ...f.b.errorSamples].map((e) => `${row.name}, c=${f.concurrency}: ${e}`)),
  );
  return [
    '## 10. Overload and fairness: one tenant floods, another pays one at a time',
    '',
    `Each configuration a fresh engine, new ${o.type}s from two tenants: \`${steady}\` alone (${c.idleOps}, one at a time) and at ` +
      `c=32 (${c.referenceOps}: the throughput), then per flood level \`${flood}\` floods and, ${(c.rampMs / 1000).toFixed(1)} s later, ` +
      `\`${steady}\` makes ${c.floodOps} one at a time (n: those done within ${(c.floodMaxMs / 1000).toFixed(0)} s). Refusals are ` +
      "retried after Retry-After and count in the latency; goodput: the flooding tenant's successes per second.",
    '',
    ...overloadTables(o),
    ...para(problems.length, () => `**Problems**: ${problems.join('; ')}.`),
    ...para(errors.length, () => `Errors: ${errors.slice(0, 5).join(' · ')}`),
    ...para(
      o.skipped.length,
      () => `**Time budget ran out** (${(c.budgetMs / 60_000).toFixed(0)} min): left out ${o.skipped.join('; ')}.`,
    ),
    "Dishonest answers: a 5xx other than 503, or a 429 or 503 without Retry-After; `503 engine_busy`: the API's bound on " +
      "operations in flight, `429`: a tenant's rate.",
    '',
  ];
};

const startup: Section = ({ r }) =>
  r.startup
    ? [
        '## Worker start-up',
        '',
        `\`node --import tsx worker/main.ts\` from spawn to its "worker ready" line, ${r.startup.workerMainMs.length} times in a row ` +
          `(${r.startup.note}): ${r.startup.workerMainMs.map((v) => `${(v / 1000).toFixed(2)} s`).join(', ')}. (The bench's own workers ` +
          `use bundles built once at the start of the run: ${(r.settings.bundleMs / 1000).toFixed(1)} s for both, in parallel with Temporal's start.)`,
        '',
      ]
    : [];

const machine: Section = ({ r }) => {
  const m = r.machine;
  const clocks = clocksOf(r).map(
    (c, i) =>
      `${i === 0 ? 'start' : 'end'}: ${(c.stalledShare * 100).toFixed(0)}% of reads stalled, largest step ${c.maxStepMs.toFixed(2)} ms`,
  );
  const passed = r.temporal.pragmasPassed;
  return [
    '## Machine, versions, flags',
    '',
    table(
      ['what', 'value'],
      [
        ['CPU', `${m.cpuModel}, ${m.cores} cores (shared)`],
        ['memory', `${m.memoryGiB} GiB`],
        ['kernel', m.kernel],
        [
          'load average (1, 5, 15 min)',
          `${m.loadAverage} at the start${m.loadAverageEnd ? `, ${m.loadAverageEnd} at the end` : ''}`,
        ],
        ['latency clock (performance.now)', clocks.join('; ')],
        ['Node.js', m.node],
        ['Temporal CLI', r.temporal.cli],
        ...Object.entries(m.packages),
        ['Temporal dev server argv', `\`${r.temporal.argv.join(' ')}\``],
        [
          'SQLite pragmas passed (`--sqlite-pragma`)',
          passed.length
            ? passed.join(', ')
            : "none: the dev server's defaults (connect attributes `mode=rwc` only, one connection)",
        ],
        ['SQLite journal_mode (read back from the file)', r.temporal.journalMode ?? 'unknown'],
        [
          'SQLite synchronous',
          passed.find((p) => p.startsWith('synchronous=')) ?? "not set: SQLite's default, FULL (each commit is fsynced)",
        ],
        ['data directory filesystem', `${r.temporal.dataFs} — a file on disk, not an in-memory database`],
        ['server tuning', `${r.tuning.settings.map((t) => t.name).join(', ') || 'none'} (from ${r.tuning.source})`],
        [
          'activity kind of the steps (and the bare baseline)',
          r.activityKind ? `${r.activityKind.used} (${r.activityKind.how})` : 'n/a',
        ],
        ['log level of the stack', r.settings.logLevel],
        ['worker options (both workers)', r.settings.workerOptions],
        ['API cache', r.settings.apiCache],
        ['counts', `\`${JSON.stringify(r.settings.counts)}\``],
      ],
    ),
    '',
    `Reproduce: \`${r.command}\` (this run). The full report is \`npm run bench -- --peers\` (every operation type, the peers, the ablation ` +
      'and the overload section, 30–40 min on a quiet 2-core machine); `npm run bench -- --quick` takes a few minutes; `--help` lists the ' +
      'flags. `node --import tsx tools/bench/render.ts <results.json>` re-renders a report from its JSON.',
    '',
  ];
};

/** The report's sections, in order: a new phase's results get a section here. */
export const SECTIONS: readonly Section[] = [
  ...[header, verdicts, ratios, newOperations, gap, replays, contention, peers, timeGoes, history, usage],
  ...[ablation, overload, startup, machine],
];

/** A run of the overload section alone (`--overload`) measured nothing the other sections show. */
const OVERLOAD_SECTIONS: readonly Section[] = [header, verdicts, overload, machine];

export function markdownReport(r: BenchResults, name: string): string {
  const ctx: Ctx = { r, name, cs: r.ratios.map((row) => row.concurrency), ops: r.operations };
  return (r.scenarios.length === 0 ? OVERLOAD_SECTIONS : SECTIONS).flatMap((section) => section(ctx)).join('\n');
}

/** Judges the verdicts, then writes the JSON, the Markdown report and the SVG chart. */
export function writeResults(results: BenchResults, to: { outDir: string; started: number; log: (line: string) => void }): void {
  const { outDir, started, log } = to;
  const name = results.name;
  results.ratios = computeRatios(
    results.scenarios,
    (results.settings.counts.concurrencies as number[]) ?? [],
    results.operations,
  );
  results.chart = { svg: writeChart(results, outDir, name) };
  results.durationMs = Date.now() - started;
  results.verdicts = computeVerdicts(results);
  const jsonPath = join(outDir, `${name}.json`);
  writeFileSync(jsonPath, resultsJson(results));
  writeFileSync(join(outDir, `${name}.md`), markdownReport(results, name));
  for (const v of results.verdicts) log(`verdict: ${v.figure}: ${v.now} (target ${v.target}, moonshot ${v.moonshot}) → ${v.met}`);
  const wrote = [relative(ROOT, jsonPath), `${name}.md`, ...(results.chart.svg ? [results.chart.svg] : [])];
  log(
    `wrote ${wrote.join(', ')} in ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${results.machine.loadAverageEnd}`,
  );
}
