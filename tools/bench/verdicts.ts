// What a run is judged by: the figures retrysafe is held to, each with a target and a moonshot,
// and the verdicts computed from the run's own numbers (its scenarios, its contention trials,
// its overload section). A figure that needs a part the run did not have (the peers, the
// overload section) is "not measured", with the command that measures it.
import { ratio } from './load.js';
import { PEER_OPERATION } from './peers/contract.js';
import { AS_SHIPPED, TENANTS } from './phases/overload.js';
import {
  clockTrouble,
  cpuVsSameWork,
  cpuPerOp,
  find,
  n1,
  n2,
  ratiosOf,
  type BenchResults,
  type OperationRatios,
} from './results.js';

export const TARGETS = { r1: 0.9, r1Fair: 0.9, r2p99: 1.25, r4: 2, cpuVsFair: 1.15 } as const;

/** A figure's target and moonshot, and which way is good. */
type Goal = { target: number; moonshot: number; better: 'lower' | 'higher' };

export const GOALS = {
  vsRestateP50: { target: 2, moonshot: 1.5, better: 'lower' },
  vsDbosThroughput: { target: 0.5, moonshot: 1, better: 'higher' },
  r1: { target: TARGETS.r1, moonshot: 0.95, better: 'higher' },
  /** R1′: against bare Temporal doing the same HTTP work. */
  r1Fair: { target: TARGETS.r1Fair, moonshot: 0.95, better: 'higher' },
  /** CPU per operation, every process that does its work, ÷ the same for bare Temporal doing the same work. */
  cpuVsFair: { target: TARGETS.cpuVsFair, moonshot: 1.05, better: 'lower' },
  /** The API's CPU per new operation, ms. */
  apiCpuMs: { target: 5, moonshot: 2.5, better: 'lower' },
  r2p99: { target: TARGETS.r2p99, moonshot: 1.1, better: 'lower' },
  replayVsRestate: { target: 1, moonshot: 0.5, better: 'lower' },
  /** Under another tenant's flood: a tenant's p50 ÷ its p50 alone. */
  floodP50: { target: 2, moonshot: 1.2, better: 'lower' },
  /** The flooding tenant's successes per second ÷ the throughput at c=32 on the same engine. */
  floodGoodput: { target: 0.9, moonshot: 1, better: 'higher' },
} as const satisfies Record<string, Goal>;

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

/** A figure and where it was taken. */
type At = { v: number; at: string };

function judged(figure: string, value: number, goal: Goal, unit: string, note?: string): Verdict {
  const ok = (bound: number) => (goal.better === 'lower' ? value <= bound : value >= bound);
  const bound = (v: number) => `${goal.better === 'lower' ? '≤' : '≥'} ${v}${unit}`;
  return {
    figure,
    now: Number.isFinite(value) ? `${n2(value)}${unit}` : 'n/a',
    value: Number.isFinite(value) ? value : null,
    target: bound(goal.target),
    moonshot: bound(goal.moonshot),
    met: !Number.isFinite(value) ? 'not measured' : ok(goal.moonshot) ? 'moonshot' : ok(goal.target) ? 'target' : 'missed',
    ...(note ? { note } : {}),
  };
}

/** The worst of `figures` against `goal` (noted where it was taken), or not measured with `missing`. */
function worst(figure: string, figures: At[], goal: Goal, unit = '', missing?: string): Verdict {
  const w = figures.filter((x) => Number.isFinite(x.v)).sort((a, b) => (goal.better === 'higher' ? a.v - b.v : b.v - a.v))[0];
  return judged(figure, w?.v ?? Number.NaN, goal, unit, w ? `worst at ${w.at}` : missing);
}

/** A yes-or-no figure: every check held (`ok`, the target and the moonshot both), over `n` things checked (none: not measured). */
function all(figure: string, target: string, n: number, ok: boolean, now: string, note: string): Verdict {
  const met: Met = n === 0 ? 'not measured' : ok ? 'moonshot' : 'missed';
  return { figure, now: n ? now : 'n/a', value: n ? Number(ok) : null, target, moonshot: target, met, note };
}

/** Against the peers (when the run raced them), with bare Temporal's own figure beside each as the engine's floor. */
function peerVerdicts(r: BenchResults): Verdict[] {
  const cs = r.ratios.map((x) => x.concurrency);
  const [low, high] = [Math.min(...cs), Math.max(...cs)];
  const raced = new Set((r.peers ?? []).map((p) => p.peer as string));
  const peer = (kind: string, c: number) => (raced.has(kind.replace(/^replay-/, '')) ? find(r.scenarios, kind, c) : undefined);
  const missing = (p: string) => (raced.has(p) ? undefined : `${p} not in this run: npm run bench -- --peers`);
  const bare = r.operations.find((op) => op.own === PEER_OPERATION);
  const floor = (v: number, unit: string) =>
    Number.isFinite(v) ? `; bare Temporal, ${bare?.activities} no-op steps: ${n2(v)}${unit}` : '';
  const [own1, restate1, bare1] = [
    find(r.scenarios, PEER_OPERATION, low),
    peer('restate', low),
    find(r.scenarios, bare?.bare, low),
  ];
  const [ownN, dbosN, bareN] = [find(r.scenarios, PEER_OPERATION, high), peer('dbos', high), find(r.scenarios, bare?.bare, high)];
  const [replay1, restateReplay1] = [find(r.scenarios, `replay-${PEER_OPERATION}`, low), peer('replay-restate', low)];
  const replayClock = clockTrouble(replay1) || clockTrouble(restateReplay1);
  const p50 = (s?: { latencyMs: { p50: number } }) => s?.latencyMs.p50 ?? Number.NaN;
  const rate = (s?: { steadyOpsPerSec: number }) => s?.steadyOpsPerSec ?? Number.NaN;
  return [
    judged(
      `${PEER_OPERATION} c=${low} p50 ÷ Restate's (same run)`,
      ratio(p50(own1), p50(restate1)),
      GOALS.vsRestateP50,
      '×',
      missing('restate') ?? `${n1(p50(own1))} ms ÷ ${n1(p50(restate1))} ms${floor(ratio(p50(bare1), p50(restate1)), '×')}`,
    ),
    judged(
      `${PEER_OPERATION} c=${high} ops/s ÷ DBOS's (same run)`,
      ratio(rate(ownN), rate(dbosN)),
      GOALS.vsDbosThroughput,
      '',
      missing('dbos') ?? `${n1(rate(ownN))}/s ÷ ${n1(rate(dbosN))}/s${floor(ratio(rate(bareN), rate(dbosN)), '')}`,
    ),
    judged(
      `replay p50 ÷ Restate's replay p50 (${PEER_OPERATION}, c=${low})`,
      replayClock ? Number.NaN : ratio(p50(replay1), p50(restateReplay1)),
      GOALS.replayVsRestate,
      '×',
      missing('restate') ??
        (replayClock
          ? "the clock stood still in over a fifth of the samples: see the mean latencies (Little's law) in section 3"
          : `${n2(p50(replay1))} ms ÷ ${n2(p50(restateReplay1))} ms`),
    ),
  ];
}

/** retrysafe against bare Temporal: R1, R1′, CPU per operation and the API's, R2 (worst over types and concurrencies). */
function engineVerdicts(r: BenchResults): Verdict[] {
  const cs = r.ratios.map((x) => x.concurrency);
  const byOp = (pick: (x: OperationRatios) => number) =>
    r.ratios.flatMap((row) => r.operations.map((op) => ({ v: pick(ratiosOf(row, op)), at: `${op.own} c=${row.concurrency}` })));
  const apiCpu = r.operations.flatMap((op) =>
    cs.map((c) => ({
      v: find(r.scenarios, op.own, c) ? cpuPerOp(find(r.scenarios, op.own, c)!, 'api') : Number.NaN,
      at: `${op.own} c=${c}`,
    })),
  );
  return [
    worst(
      `R1: ops/s ÷ bare Temporal, same server, same activity kind, c = ${cs.join(', ')} (worst)`,
      byOp((x) => x.r1),
      GOALS.r1,
    ),
    worst(
      `R1′: ops/s ÷ bare Temporal making the same HTTP calls, c = ${cs.join(', ')} (worst)`,
      byOp((x) => x.r1Fair),
      GOALS.r1Fair,
      '',
      'no same-work baseline in this run',
    ),
    ...r.operations.map((op) =>
      worst(
        `CPU per ${op.own} ÷ bare Temporal making the same HTTP calls (worst c)`,
        cs.map((c) => ({ v: cpuVsSameWork(r, op, c), at: `c=${c}` })),
        GOALS.cpuVsFair,
        '×',
      ),
    ),
    worst('API CPU per new operation (worst type and c)', apiCpu, GOALS.apiCpuMs, ' ms'),
    worst(
      'R2 p99 (worst)',
      byOp((x) => x.r2p99),
      GOALS.r2p99,
    ),
  ];
}

function contentionVerdict(r: BenchResults): Verdict {
  const executions = r.contention.map((t) => t.executions);
  const effects = r.contention.flatMap((t) => Object.values(t.effects));
  const worstOf = (v: number[]) => v.reduce((a, b) => (Math.abs(b - 1) > Math.abs(a - 1) ? b : a), 1);
  const ok = executions.every((e) => e === 1) && effects.every((e) => e === 1);
  return all(
    'contention: executions, effects per key',
    '1, 1',
    executions.length,
    ok,
    `${worstOf(executions)}, ${worstOf(effects)}`,
    `${r.contention.length} trials of ${r.contention[0]?.requests ?? 0} identical requests`,
  );
}

/**
 * The overload section's verdicts: the steady tenant's p50 and the flooding tenant's goodput as
 * shipped (fairness on, the API's default admission), at the worst flood level; and, over
 * every configuration, that nothing accepted was lost or doubled and every refusal was honest.
 */
function overloadVerdicts(r: BenchResults): Verdict[] {
  const o = r.overload;
  const { flood, steady } = o?.tenants ?? TENANTS;
  const row = o?.rows.find((x) => x.name === AS_SHIPPED);
  const missing = o
    ? `the configuration "${AS_SHIPPED}" did not run (time budget)`
    : 'not in this run: npm run bench -- --overload';
  const floods = row?.floods ?? [];
  const slowdown = floods.map((f) => ({
    v: ratio(f.b.latencyMs.p50, row!.idle.latencyMs.p50),
    at: `${flood} c=${f.concurrency}: ${n1(f.b.latencyMs.p50)} ms ÷ ${n1(row!.idle.latencyMs.p50)} ms (p99 ×${n2(ratio(f.b.latencyMs.p99, row!.idle.latencyMs.p99))})`,
  }));
  const goodput = floods.map((f) => ({
    v: ratio(f.aGoodput, row!.reference.opsPerSec),
    at: `c=${f.concurrency}: ${n1(f.aGoodput)}/s ÷ ${n1(row!.reference.opsPerSec)}/s at c=${row!.reference.concurrency}`,
  }));
  const rows = o?.rows ?? [];
  const problems = rows.flatMap((x) => x.audit.problems.map((p) => `${x.name}: ${p}`));
  const accepted = rows.reduce((n, x) => n + x.audit.accepted, 0);
  return [
    worst(`${steady} p50 during ${flood}'s flood ÷ alone (as shipped, worst flood)`, slowdown, GOALS.floodP50, '×', missing),
    worst(
      `${flood}'s goodput during its flood ÷ the throughput at c=32 (as shipped, worst flood)`,
      goodput,
      GOALS.floodGoodput,
      '',
      missing,
    ),
    all(
      'overload: every accepted operation terminal, each account moved exactly its successes, refusals honest',
      'all',
      rows.length,
      problems.length === 0,
      problems.length ? `${problems.length} problem${problems.length === 1 ? '' : 's'}` : 'all',
      rows.length
        ? problems.length
          ? problems.slice(0, 3).join('; ')
          : `${accepted} accepted operations, ${rows.length} configurations`
        : missing,
    ),
  ];
}

/** The verdicts of a run, from its own numbers; a run of the overload section alone has nothing else to judge. */
export function computeVerdicts(r: BenchResults): Verdict[] {
  if (r.scenarios.length === 0) return overloadVerdicts(r);
  const [vsRestate, vsDbos, replay] = peerVerdicts(r);
  return [vsRestate!, vsDbos!, ...engineVerdicts(r), replay!, contentionVerdict(r), ...overloadVerdicts(r)];
}
