// Section 6, where the time goes: each operation's phases inside Temporal, read off the
// timestamps of sampled histories, beside its bare workflow's; then the CPU each process
// spent per operation, ours and the peers'.
import { find } from '../results.js';
import type { Kind } from '../scenarios/measure.js';
import type { Timeline } from '../timeline.js';
import type { ReportContext, Section } from './context.js';
import { cpuPerOp, ms, n1, table } from './format.js';
import { kindFacts, kindRows, label, operationsOf, PEER_ENGINES, partLabel, type Operation } from './kinds.js';

function phases({ r, cs }: ReportContext, op: Operation, a: Timeline): string[] {
  const b = r.timeline?.find((t) => t.kind === op.bare);
  // The same work on bare Temporal, when the run read its histories: a column of its own.
  const f = op.fair ? r.timeline?.find((t) => t.kind === op.fair) : undefined;
  const names = [
    ...new Set([
      ...a.phases.map((p) => p.phase),
      ...(f?.phases.map((p) => p.phase) ?? []),
      ...(b?.phases.map((p) => p.phase) ?? []),
    ]),
  ];
  const value = (t: Timeline | undefined, phase: string) => {
    const p = t?.phases.find((x) => x.phase === phase);
    return p ? ms(p.medianMs) : '—';
  };
  const stepLabel = (phase: string) => {
    const m = /^step (\d+)/.exec(phase);
    if (!m) return phase;
    const i = Number(m[1]) - 1;
    return `${phase} — ${a.stepNames[i] ?? '?'}${b?.stepNames[i] ? ` / ${b.stepNames[i]}` : ''}`;
  };
  const c = cs[0]!;
  const p50 = (k: Kind) => find(r.scenarios, k, c)?.latencyMs.p50 ?? Number.NaN;
  // What the client waited beyond the history: the API, the start RPC and fetching the result.
  const outside = (k: Kind, t: Timeline | undefined) => (t ? p50(k) - t.startToCloseMs : Number.NaN);
  // Each row: retrysafe's figure, the same work's (when read), the floor's.
  const cells = (own: string | number, fair: string | number, floor: string | number): Array<string | number> =>
    f ? [own, fair, floor] : [own, floor];
  return [
    `### ${op.own} vs ${f ? `${label(op.fair!)} and ` : ''}${label(op.bare)} (${r.activityKind?.used ?? 'regular'} activities), ms`,
    '',
    table(
      ['phase', ...cells(op.own, label(op.fair ?? ''), label(op.bare)).map(String)],
      [
        ...names.map((ph) => [stepLabel(ph), ...cells(value(a, ph), value(f, ph), value(b, ph))]),
        [
          'start → close (in the history)',
          ...cells(ms(a.startToCloseMs), ms(f?.startToCloseMs ?? Number.NaN), ms(b?.startToCloseMs ?? Number.NaN)),
        ],
        ['workflow tasks per operation', ...cells(a.workflowTasks, f?.workflowTasks ?? '—', b?.workflowTasks ?? '—')],
        [`client end-to-end p50, c=${c}`, ...cells(ms(p50(op.own)), ms(op.fair ? p50(op.fair) : Number.NaN), ms(p50(op.bare)))],
        [
          'outside the history (API, start RPC, result)',
          ...cells(ms(outside(op.own, a)), ms(op.fair ? outside(op.fair, f) : Number.NaN), ms(outside(op.bare, b))),
        ],
      ],
    ),
    '',
  ];
}

function cpuByProcess({ r, cs }: ReportContext): string {
  const ops = operationsOf(r).flatMap((op) => [op.own, ...(op.fair ? [op.fair] : []), op.bare]);
  const kinds = [...new Set([...ops, ...PEER_ENGINES])].filter((k) => r.scenarios.some((s) => s.kind === k));
  // One column per role: the baseline's worker shares the worker column.
  const column = (p: string) => (p === 'baselineWorker' ? 'worker' : p);
  const parts = (k: Kind) => kindFacts(k).parts ?? [];
  const columns = [...new Set(kinds.flatMap((k) => parts(k).map(column)))];
  return table(
    ['operation', 'c', 'all ms/op', ...columns.map(partLabel)],
    kindRows(r.scenarios, kinds, cs, 'kind', (s, cpu, k) => [
      n1(cpu?.total ?? Number.NaN),
      ...columns.map((col) => {
        const p = parts(k).find((x) => column(x) === col);
        return p && s ? n1(cpuPerOp(s, p)) : '';
      }),
    ]),
  );
}

export const timeGoes: Section = (ctx) => {
  const { r, cs } = ctx;
  if (!r.timeline?.length) return [];
  const out = ['## 6. Where the time goes', ''];
  out.push(
    `Inside Temporal, from the histories of ${r.timeline[0]!.sampled} operations per kind at c=${cs[0]} (medians of each phase's ` +
      'per-operation total, so the rows need not add up exactly): each workflow task from scheduled to started (waiting ' +
      'for the history service to dispatch it and a worker to poll it) and from started to completed (the worker running ' +
      'the workflow code), each activity from scheduled to started and started to completed, each local activity from ' +
      "its task's start (or the previous local activity's completion) to the completion its marker records: it runs " +
      'inside the workflow task, so that row is part of the task\'s. "Outside the history" is the ' +
      "client's end-to-end p50 minus start → close: the API, the start RPC and the wait for the result. An activity " +
      'dispatch near 0 ms is eager dispatch: the worker got the activity in the answer to its workflow task completion.',
  );
  out.push('');
  // The saga with the most steps first: it shows the most phases.
  for (const op of [...operationsOf(r)].sort((a, b) => b.activities - a.activities)) {
    const a = r.timeline.find((t) => t.kind === op.own);
    if (a) out.push(...phases(ctx, op, a));
  }
  out.push(
    'CPU per operation by process (user + system, all threads, from /proc; PostgreSQL with its backends), at each ' +
      "concurrency: where the machine's two cores go. The bench process is the Temporal client of the bare workflows, " +
      'and the HTTP client of everything else (not counted there).',
  );
  out.push('');
  out.push(cpuByProcess(ctx));
  out.push('');
  return out;
};
