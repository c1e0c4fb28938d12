// The bench's own decisions, isolated from any run: the verdicts, judged from a run's numbers
// against their targets and moonshots (those of the last full run, as committed, and the same
// run with parts taken away or changed), which server configurations the ablation runs, which
// baseline workflow matches retrysafe's activity kind, and how a history's timestamps become
// phases.
import { readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { ablationPlan, ALL_OFF, ALL_ON } from '../../tools/bench/phases/ablation.js';
import { bareWorkflowType } from '../../tools/bench/phases/context.js';
import { phasesOf, recordedActivityKind } from '../../tools/bench/phases/histories.js';
import type { ScenarioResult } from '../../tools/bench/load.js';
import { computeRatios, find, type BenchResults } from '../../tools/bench/results.js';
import { computeVerdicts } from '../../tools/bench/verdicts.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const HistoryEvent = proto.temporal.api.history.v1.HistoryEvent;

function lastFullRun(): BenchResults {
  const r = JSON.parse(
    readFileSync(new URL('../../tools/bench/results/2026-12-02-final.json', import.meta.url), 'utf8'),
  ) as BenchResults;
  r.ratios = computeRatios(
    r.scenarios,
    r.ratios.map((x) => x.concurrency),
    r.operations,
  );
  return r;
}

const brief = (r: BenchResults) => computeVerdicts(r).map((v) => [v.figure, v.now, v.met]);

describe('bench verdicts', () => {
  it('judges the last full run as its committed report did: each figure, where it is worst, and its note', () => {
    const r = lastFullRun();
    expect(computeVerdicts(r)).toEqual(r.verdicts);
    expect(brief(r).map(([, now, met]) => [now, met])).toEqual([
      ['2.99×', 'missed'],
      ['0.32', 'missed'],
      ['0.70', 'missed'],
      ['0.76', 'missed'],
      ['1.07×', 'target'],
      ['1.28×', 'missed'],
      ['1.15×', 'missed'],
      ['5.94 ms', 'missed'],
      ['1.65', 'missed'],
      ['0.14×', 'moonshot'],
      ['1, 1', 'moonshot'],
      ['27.05×', 'missed'],
      ['0.71', 'missed'],
      ['all', 'moonshot'],
    ]);
  });

  it("divides a peer figure by the peer's own number and shows bare Temporal's beside it", () => {
    const r = lastFullRun();
    const [checkout, restate, bare] = ['checkout', 'restate', 'bare3'].map((k) => find(r.scenarios, k, 1)!) as [
      ScenarioResult,
      ScenarioResult,
      ScenarioResult,
    ];
    checkout.latencyMs.p50 = 30;
    restate.latencyMs.p50 = 10;
    bare.latencyMs.p50 = 20;
    const [vsRestate] = computeVerdicts(r);
    expect(vsRestate).toMatchObject({
      value: 3,
      now: '3.00×',
      met: 'missed',
      note: '30.0 ms ÷ 10.0 ms; bare Temporal, 3 no-op steps: 2.00×',
    });
    restate.latencyMs.p50 = 20;
    expect(computeVerdicts(r)[0]).toMatchObject({ value: 1.5, met: 'moonshot' });
  });

  it('says a figure was not measured, and how to measure it, when the run lacked its part', () => {
    const r = lastFullRun();
    Object.assign(r, { peers: null, overload: null });
    const missing = computeVerdicts(r).filter((v) => v.met === 'not measured');
    expect(missing.map((v) => v.figure.split(' ')[0])).toEqual([
      'checkout',
      'checkout',
      'replay',
      'tenant-b',
      "tenant-a's",
      'overload:',
    ]);
    expect(missing[0]!.note).toContain('--peers');
    expect(missing.at(-1)!.note).toContain('--overload');
    for (const v of missing) expect(v.value).toBeNull();
  });

  it('fails the contention figure when a key ran twice or moved money twice, and the overload one on any problem', () => {
    const r = lastFullRun();
    r.contention[0]!.effects = { ...r.contention[0]!.effects, 'account x': 2 };
    r.overload!.rows[1]!.audit.problems = ['tenant-a: 1 operations not as answered or not terminal'];
    const verdicts = computeVerdicts(r);
    expect(verdicts.find((v) => v.figure.startsWith('contention'))).toMatchObject({ now: '1, 2', met: 'missed' });
    expect(verdicts.at(-1)).toMatchObject({ now: '1 problem', met: 'missed', value: 0 });
  });

  it('judges a run of the overload section alone by the overload figures only', () => {
    const r = lastFullRun();
    Object.assign(r, { scenarios: [], ratios: [], contention: [], operations: [] });
    expect(computeVerdicts(r).map((v) => v.met)).toEqual(['missed', 'missed', 'moonshot']);
  });
});

describe('ablation plan', () => {
  it('runs every setting, then none, then each one off in turn', () => {
    expect(ablationPlan(['transfer', 'wal'])).toEqual([
      { name: ALL_ON, without: [] },
      { name: ALL_OFF, without: ['transfer', 'wal'] },
      { name: 'without transfer', without: ['transfer'] },
      { name: 'without wal', without: ['wal'] },
    ]);
    expect(ablationPlan([])).toEqual([{ name: ALL_OFF, without: [] }]);
  });
});

describe('where the time goes', () => {
  const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
  const marker = (type: string, completedMs: number) => ({
    markerName: 'core_local_activity',
    details: {
      data: { payloads: [{ data: Buffer.from(JSON.stringify({ activity_type: type, complete_time: at(completedMs) })) }] },
    },
  });

  it('reads a local activity step from its task start and the previous completion its marker records', () => {
    const events = [
      { eventId: 1, eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, eventTime: at(1_000_000) },
      { eventId: 2, eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, eventTime: at(1_000_000) },
      {
        ...{ eventId: 3, eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, eventTime: at(1_000_004) },
        workflowTaskStartedEventAttributes: { scheduledEventId: 2 },
      },
      {
        ...{ eventId: 4, eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, eventTime: at(1_000_030) },
        workflowTaskCompletedEventAttributes: { startedEventId: 3 },
      },
      {
        ...{ eventId: 5, eventType: EventType.EVENT_TYPE_MARKER_RECORDED, eventTime: at(1_000_030) },
        markerRecordedEventAttributes: marker('reserveItems', 1_000_010),
      },
      {
        ...{ eventId: 6, eventType: EventType.EVENT_TYPE_MARKER_RECORDED, eventTime: at(1_000_030) },
        markerRecordedEventAttributes: marker('chargePayment', 1_000_025),
      },
      { eventId: 7, eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, eventTime: at(1_000_031) },
    ].map((e) => HistoryEvent.fromObject(e));
    const { phases, stepNames, workflowTasks, inside } = phasesOf(events);
    expect(stepNames).toEqual(['reserve_items', 'charge_payment']);
    expect(workflowTasks).toBe(1);
    expect(Object.fromEntries(phases)).toEqual({
      'workflow tasks: scheduled → started (dispatch)': 4,
      'workflow tasks: started → completed (worker)': 26,
      'step 1: local activity (inside its workflow task)': 6,
      'step 2: local activity (inside its workflow task)': 15,
      'start → close': 31,
    });
    expect([...inside]).toEqual([
      'step 1: local activity (inside its workflow task)',
      'step 2: local activity (inside its workflow task)',
    ]);
    expect(recordedActivityKind(events)).toBe('local');
  });

  it('picks the bare baseline of the same activity kind', () => {
    expect(bareWorkflowType('regular', false)).toBe('bare');
    expect(bareWorkflowType('local', false)).toBe('bareLocal');
    expect(bareWorkflowType('local', true)).toBe('bareLocalTracked');
    expect(bareWorkflowType('regular', true)).toBe('bareTracked');
    expect(recordedActivityKind([HistoryEvent.create({ eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED })])).toBe(
      'regular',
    );
  });
});
