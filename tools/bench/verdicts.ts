// What a run is judged by: the figures retrysafe is held to, each with a target and a
// moonshot, and the verdicts computed from the run's own numbers (its scenarios, its
// contention trials, its overload section).
import type { PeerName } from './peers/index.js';
import { operationsOf, ratiosOf, systemCpu } from './report/kinds.js';
import { cpuPerOp, n1, n2 } from './report/format.js';
import { PEER_OPERATION } from './peers/contract.js';
import { clockTrouble, find, type BenchResults, type OperationRatios } from './results.js';
import type { Kind } from './scenarios/measure.js';
import { AS_SHIPPED, TENANTS, type OverloadResult } from './scenarios/overload-figures.js';
import { ratio } from './stats.js';

export const TARGETS = { r1: 0.9, r1Fair: 0.9, r2p99: 1.25, r4: 2, executions: 1, effects: 1 } as const;

/**
 * The figures retrysafe is held to, each with its target and a moonshot; every verdict is
 * computed from the run's own numbers. `better` says which way is good.
 */
export const GOALS = {
  vsRestateP50: { target: 2, moonshot: 1.5, better: 'lower' },
  vsDbosThroughput: { target: 0.5, moonshot: 1, better: 'higher' },
  r1: { target: TARGETS.r1, moonshot: 0.95, better: 'higher' },
  /** R1′: against bare Temporal doing the same HTTP work. */
  r1Fair: { target: TARGETS.r1Fair, moonshot: 0.95, better: 'higher' },
  /** CPU per operation, every process that does its work, ÷ the same for bare Temporal doing the same work. */
  cpuVsFair: { target: 1.15, moonshot: 1.05, better: 'lower' },
  /** The API's CPU per new operation, ms. */
  apiCpuMs: { target: 5, moonshot: 2.5, better: 'lower' },
  r2p99: { target: TARGETS.r2p99, moonshot: 1.1, better: 'lower' },
  replayVsRestate: { target: 1, moonshot: 0.5, better: 'lower' },
  /** Under another tenant's flood: a tenant's p50 ÷ its p50 alone. */
  floodP50: { target: 2, moonshot: 1.2, better: 'lower' },
  /** The flooding tenant's successes per second ÷ the throughput at c=32 on the same engine. */
  floodGoodput: { target: 0.9, moonshot: 1, better: 'higher' },
} as const;

export type Met = 'moonshot' | 'target' | 'missed' | 'not measured';

export interface Verdict {
  figure: string;
  /** The run's figure as shown; `value` is the number it was judged on (null: not measured). */
  now: string;
  value: number | null;
  target: string;
  moonshot: string;
  met: Met;
  note?: string;
}

/** A figure's target and moonshot, and which way is good. */
type Goal = { target: number; moonshot: number; better: 'lower' | 'higher' };

function judge(value: number, goal: Goal): Met {
  if (!Number.isFinite(value)) return 'not measured';
  const ok = (bound: number) => (goal.better === 'lower' ? value <= bound : value >= bound);
  return ok(goal.moonshot) ? 'moonshot' : ok(goal.target) ? 'target' : 'missed';
}

const bound = (goal: Goal, v: number, unit = '') => `${goal.better === 'lower' ? '≤' : '≥'} ${v}${unit}`;

type Push = (figure: string, value: number, goal: Goal, unit: string, note?: string) => void;

/** The worst of figures by where they were taken; undefined when none is a number. */
function worst(figures: Array<{ v: number; at: string }>, better: Goal['better']): { v: number; at: string } | undefined {
  return figures.filter((x) => Number.isFinite(x.v)).sort((a, b) => (better === 'higher' ? a.v - b.v : b.v - a.v))[0];
}

/** What a verdict is computed from: a run's results (the parts an older run may lack are optional). */
export type VerdictInput = Pick<BenchResults, 'scenarios' | 'ratios' | 'contention' | 'peers'> &
  Partial<Pick<BenchResults, 'operations' | 'overload'>>;

/** The verdicts of a run against GOALS, from its own scenarios, contention trials and overload rows. */
export function computeVerdicts(r: VerdictInput): Verdict[] {
  const cs = r.ratios.map((x) => x.concurrency);
  const low = Math.min(...cs);
  const high = Math.max(...cs);
  const ops = operationsOf(r);
  const peers = new Set((r.peers ?? []).map((p) => p.peer));
  const noPeer = (peer: string) =>
    peers.has(peer as PeerName) ? undefined : `${peer} not in this run: npm run bench -- --peers`;
  const verdicts: Verdict[] = [];
  const push: Push = (figure, value, goal, unit, note) =>
    verdicts.push({
      figure,
      now: Number.isFinite(value) ? `${n2(value)}${unit}` : 'n/a',
      value: Number.isFinite(value) ? value : null,
      target: bound(goal, goal.target, unit),
      moonshot: bound(goal, goal.moonshot, unit),
      met: judge(value, goal),
      ...(note ? { note } : {}),
    });
  // A run of the overload section alone has nothing else to judge.
  if (r.scenarios.length === 0 && r.overload) {
    verdicts.push(...overloadVerdicts(r.overload, push));
    return verdicts;
  }
  const pushWorst = (figure: string, figures: Array<{ v: number; at: string }>, goal: Goal, unit = '', missing?: string) => {
    const w = worst(figures, goal.better);
    push(figure, w?.v ?? Number.NaN, goal, unit, w ? `worst at ${w.at}` : missing);
  };

  // A peer's figures count only when the run raced that peer.
  const peerScenario = (kind: Kind, c: number) =>
    peers.has(kind.replace(/^replay-/, '') as PeerName) ? find(r.scenarios, kind, c) : undefined;
  // The peers run one operation; its own bare workflow is the engine's floor beside each peer figure.
  const raced = ops.find((op) => op.own === PEER_OPERATION);
  const checkout1 = find(r.scenarios, PEER_OPERATION, low);
  const restate1 = peerScenario('restate', low);
  // The engine's own floor beside each peer figure: bare Temporal, as many no-op steps of the
  // same kind on the same server, divided by the same peer number.
  const bareLow = raced ? find(r.scenarios, raced.bare, low) : undefined;
  const floor = (value: number, unit: string) =>
    Number.isFinite(value) ? `; bare Temporal, ${raced?.activities} no-op steps: ${n2(value)}${unit}` : '';
  push(
    `${PEER_OPERATION} c=${low} p50 ÷ Restate's (same run)`,
    ratio(checkout1?.latencyMs.p50, restate1?.latencyMs.p50),
    GOALS.vsRestateP50,
    '×',
    noPeer('restate') ??
      `${n1(checkout1?.latencyMs.p50 ?? Number.NaN)} ms ÷ ${n1(restate1?.latencyMs.p50 ?? Number.NaN)} ms` +
        floor(ratio(bareLow?.latencyMs.p50, restate1?.latencyMs.p50), '×'),
  );
  const checkoutHigh = find(r.scenarios, PEER_OPERATION, high);
  const dbosHigh = peerScenario('dbos', high);
  const bareHigh = raced ? find(r.scenarios, raced.bare, high) : undefined;
  push(
    `${PEER_OPERATION} c=${high} ops/s ÷ DBOS's (same run)`,
    ratio(checkoutHigh?.steadyOpsPerSec, dbosHigh?.steadyOpsPerSec),
    GOALS.vsDbosThroughput,
    '',
    noPeer('dbos') ??
      `${n1(checkoutHigh?.steadyOpsPerSec ?? Number.NaN)}/s ÷ ${n1(dbosHigh?.steadyOpsPerSec ?? Number.NaN)}/s` +
        floor(ratio(bareHigh?.steadyOpsPerSec, dbosHigh?.steadyOpsPerSec), ''),
  );
  const byOp = (pick: (x: OperationRatios) => number) =>
    r.ratios.flatMap((row) => ops.map((op) => ({ v: pick(ratiosOf(row, op)), at: `${op.own} c=${row.concurrency}` })));
  pushWorst(
    `R1: ops/s ÷ bare Temporal, same server, same activity kind, c = ${cs.join(', ')} (worst)`,
    byOp((x) => x.r1),
    GOALS.r1,
  );
  // Runs before the same-work baseline have no figures for it: one line, not measured.
  if (ops.some((op) => op.fair)) {
    pushWorst(
      `R1′: ops/s ÷ bare Temporal making the same HTTP calls, c = ${cs.join(', ')} (worst)`,
      byOp((x) => x.r1Fair),
      GOALS.r1Fair,
      '',
      'no same-work baseline in this run',
    );
    for (const op of ops) {
      const figures = cs.map((c) => {
        const own = find(r.scenarios, op.own, c);
        const fair = op.fair ? find(r.scenarios, op.fair, c) : undefined;
        return { v: own && fair ? ratio(systemCpu(own).total, systemCpu(fair).total) : Number.NaN, at: `c=${c}` };
      });
      pushWorst(`CPU per ${op.own} ÷ bare Temporal making the same HTTP calls (worst c)`, figures, GOALS.cpuVsFair, '×');
    }
    pushWorst(
      'API CPU per new operation (worst type and c)',
      ops.flatMap((op) =>
        cs.map((c) => {
          const s = find(r.scenarios, op.own, c);
          return { v: s ? cpuPerOp(s, 'api') : Number.NaN, at: `${op.own} c=${c}` };
        }),
      ),
      GOALS.apiCpuMs,
      ' ms',
    );
  }
  pushWorst(
    'R2 p99 (worst)',
    byOp((x) => x.r2p99),
    GOALS.r2p99,
  );
  const replay1 = find(r.scenarios, `replay-${PEER_OPERATION}`, low);
  const restateReplay1 = peerScenario('replay-restate', low);
  const replayClock = clockTrouble(replay1) || clockTrouble(restateReplay1);
  push(
    `replay p50 ÷ Restate's replay p50 (${PEER_OPERATION}, c=${low})`,
    replayClock ? Number.NaN : ratio(replay1?.latencyMs.p50, restateReplay1?.latencyMs.p50),
    GOALS.replayVsRestate,
    '×',
    noPeer('restate') ??
      (replayClock
        ? "the clock stood still in over a fifth of the samples: see the mean latencies (Little's law) in section 3"
        : `${n2(replay1?.latencyMs.p50 ?? Number.NaN)} ms ÷ ${n2(restateReplay1?.latencyMs.p50 ?? Number.NaN)} ms`),
  );
  const executions = r.contention.map((t) => t.executions);
  const effects = r.contention.flatMap((t) =>
    t.effects ? Object.values(t.effects) : [t.charges, ...(t.unitsTaken === null ? [] : [t.unitsTaken])],
  );
  const worstOf = (v: number[]) => (v.length ? v.reduce((a, b) => (Math.abs(b - 1) > Math.abs(a - 1) ? b : a)) : Number.NaN);
  const contentionOk =
    executions.length > 0 && executions.every((e) => e === TARGETS.executions) && effects.every((e) => e === TARGETS.effects);
  verdicts.push({
    figure: 'contention: executions, effects per key',
    now: executions.length ? `${worstOf(executions)}, ${worstOf(effects)}` : 'n/a',
    value: executions.length ? (contentionOk ? 1 : 0) : null,
    target: '1, 1',
    moonshot: '1, 1',
    met: executions.length === 0 ? 'not measured' : contentionOk ? 'moonshot' : 'missed',
    note: `${r.contention.length} trials of ${r.contention[0]?.requests ?? 0} identical requests`,
  });
  if (r.overload !== undefined) verdicts.push(...overloadVerdicts(r.overload, push));
  return verdicts;
}

/**
 * The overload section's verdicts: the steady tenant's p50 and the flooding tenant's
 * goodput as shipped (fairness on, the API's default admission), at the worst flood level;
 * and, over every configuration, that nothing accepted was lost or doubled and every
 * refusal was honest. Appended through `push` (the figures) and returned (the audit).
 */
function overloadVerdicts(o: OverloadResult | null, push: Push): Verdict[] {
  const { flood, steady } = o?.tenants ?? TENANTS;
  const row = o?.rows.find((x) => x.name === AS_SHIPPED);
  const missing = o
    ? `the configuration "${AS_SHIPPED}" did not run (time budget)`
    : 'not in this run: npm run bench -- --overload';
  const slowdown = worst(
    (row?.floods ?? []).map((f) => ({
      v: ratio(f.b.latencyMs.p50, row!.idle.latencyMs.p50),
      at: `${flood} c=${f.concurrency}: ${n1(f.b.latencyMs.p50)} ms ÷ ${n1(row!.idle.latencyMs.p50)} ms (p99 ×${n2(ratio(f.b.latencyMs.p99, row!.idle.latencyMs.p99))})`,
    })),
    GOALS.floodP50.better,
  );
  push(
    `${steady} p50 during ${flood}'s flood ÷ alone (as shipped, worst flood)`,
    slowdown?.v ?? Number.NaN,
    GOALS.floodP50,
    '×',
    slowdown ? `worst at ${slowdown.at}` : missing,
  );
  const goodput = worst(
    (row?.floods ?? []).map((f) => ({
      v: ratio(f.aGoodput, row!.reference.opsPerSec),
      at: `c=${f.concurrency}: ${n1(f.aGoodput)}/s ÷ ${n1(row!.reference.opsPerSec)}/s at c=${row!.reference.concurrency}`,
    })),
    GOALS.floodGoodput.better,
  );
  push(
    `${flood}'s goodput during its flood ÷ the throughput at c=32 (as shipped, worst flood)`,
    goodput?.v ?? Number.NaN,
    GOALS.floodGoodput,
    '',
    goodput ? `worst at ${goodput.at}` : missing,
  );
  const rows = o?.rows ?? [];
  const problems = rows.flatMap((x) => x.audit.problems.map((p) => `${x.name}: ${p}`));
  const accepted = rows.reduce((n, x) => n + x.audit.accepted, 0);
  return [
    {
      figure: 'overload: every accepted operation terminal, each account moved exactly its successes, refusals honest',
      now: rows.length ? (problems.length ? `${problems.length} problem${problems.length === 1 ? '' : 's'}` : 'all') : 'n/a',
      value: rows.length ? (problems.length ? 0 : 1) : null,
      target: 'all',
      moonshot: 'all',
      met: rows.length === 0 ? 'not measured' : problems.length ? 'missed' : 'moonshot',
      note: rows.length
        ? problems.length
          ? problems.slice(0, 3).join('; ')
          : `${accepted} accepted operations, ${rows.length} configurations`
        : missing,
    },
  ];
}
