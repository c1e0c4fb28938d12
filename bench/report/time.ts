// Section 6, where the time goes: each operation's phases inside Temporal, read off the
// timestamps of sampled histories, beside its bare workflow's; then the CPU each process
// spent per operation, ours and the peers'.
import { find } from '../results.js';
import type { Kind } from '../scenarios/measure.js';
import type { Timeline } from '../timeline.js';
import type { ReportContext, Section } from './context.js';
import { cpuPerOp, ms, n1, table } from './format.js';
import { KINDS, OPERATIONS, PEER_ENGINES, label, partLabel, systemCpu, type Operation } from './kinds.js';

/** The saga with the most steps first: it shows the most phases. */
const BY_STEPS = [...OPERATIONS].sort((a, b) => b.activities - a.activities);

function phases({ r, cs }: ReportContext, op: Operation, a: Timeline): string[] {
  const b = r.timeline?.find((t) => t.kind === op.bare);
  const names = [...new Set([...a.phases.map((p) => p.phase), ...(b?.phases.map((p) => p.phase) ?? [])])];
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
  return [
    `### ${op.own} vs ${label(op.bare)} (${r.activityKind?.used ?? 'regular'} activities), ms`,
    '',
    table(
      ['phase', op.own, label(op.bare)],
      [
        ...names.map((ph) => [stepLabel(ph), value(a, ph), value(b, ph)]),
        ['start → close (in the history)', ms(a.startToCloseMs), ms(b?.startToCloseMs ?? Number.NaN)],
        ['workflow tasks per operation', a.workflowTasks, b?.workflowTasks ?? '—'],
        [`client end-to-end p50, c=${c}`, ms(p50(op.own)), ms(p50(op.bare))],
        ['outside the history (API, start RPC, result)', ms(outside(op.own, a)), ms(outside(op.bare, b))],
      ],
    ),
    '',
  ];
}

function cpuByProcess({ r, cs }: ReportContext): string {
  const kinds = [...OPERATIONS.flatMap((op) => [op.own, op.bare]), ...PEER_ENGINES].filter((k) =>
    r.scenarios.some((s) => s.kind === k),
  );
  // One column per role: the baseline's worker shares the worker column.
  const column = (p: string) => (p === 'baselineWorker' ? 'worker' : p);
  const parts = (k: Kind) => KINDS[k].parts ?? [];
  const columns = [...new Set(kinds.flatMap((k) => parts(k).map(column)))];
  return table(
    ['operation', 'c', 'all ms/op', ...columns.map(partLabel)],
    kinds.flatMap((k) =>
      cs.map((c) => {
        const s = find(r.scenarios, k, c);
        const cpu = s ? systemCpu(s) : undefined;
        return [
          label(k),
          c,
          n1(cpu?.total ?? Number.NaN),
          ...columns.map((col) => {
            const p = parts(k).find((x) => column(x) === col);
            return p && s ? n1(cpuPerOp(s, p)) : '';
          }),
        ];
      }),
    ),
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
  for (const op of BY_STEPS) {
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
