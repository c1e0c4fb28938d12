// The bench's own decisions, isolated from any run: how a verdict is judged against its
// target and moonshot, which server configurations the ablation runs and that a setting
// left out is really gone from the server's command line, which baseline workflow matches
// retrysafe's activity kind, and how a history's timestamps become phases.
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import type { BenchResults } from '../../tools/bench/results.js';
import { computeVerdicts } from '../../tools/bench/verdicts.js';
import { ablationPlan, ALL_OFF, ALL_ON } from '../../tools/bench/scenarios/ablation.js';
import { bareWorkflowType } from '../../tools/bench/scenarios/context.js';
import type { Kind, ScenarioResult } from '../../tools/bench/scenarios/measure.js';
import { phasesOf, recordedActivityKind } from '../../tools/bench/timeline.js';
import type { Tuning } from '../../tools/bench/tuning.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const HistoryEvent = proto.temporal.api.history.v1.HistoryEvent;

function scenario(kind: Kind, concurrency: number, p50: number, opsPerSec: number): ScenarioResult {
  const latency = { n: 10, mean: p50, min: p50, p50, p95: p50, p99: p50, max: p50 };
  return {
    kind,
    concurrency,
    ops: 10,
    errors: 0,
    errorSamples: [],
    wallMs: 1000,
    opsPerSec,
    latencyMs: latency,
    samplesMs: [],
    usage: {
      cpuMs: {},
      peakRssMb: {},
      rpcs: {},
      peakReset: true,
      machineBusyMs: 0,
      foreignMs: 0,
      stealMs: 0,
      capacityMs: 0,
    },
    answered202: 0,
    retried503: 0,
    littleMeanMs: p50,
    steadyOpsPerSec: opsPerSec,
    batchesCappedByTime: 0,
    nonPositiveSamples: 0,
  };
}

function run(scenarios: ScenarioResult[], peers: boolean): Parameters<typeof computeVerdicts>[0] {
  const ratio = (concurrency: number, r1: number, r2: number) => ({
    concurrency,
    r1Payment: r1,
    r1Checkout: r1,
    r1PaymentWall: r1,
    r1CheckoutWall: r1,
    r2PaymentP50: r2,
    r2PaymentP99: r2,
    r2CheckoutP50: r2,
    r2CheckoutP99: r2,
    r4: 1,
    r4P99: 1,
    r4Mean: 1,
  });
  return {
    scenarios,
    ratios: [ratio(1, 0.97, 1.05), ratio(32, 0.92, 1.2)],
    contention: [{ executions: 1, charges: 1, unitsTaken: 1, requests: 100 }] as BenchResults['contention'],
    peers: peers
      ? [
          { peer: 'restate', durability: [], versions: {}, processes: [] },
          { peer: 'dbos', durability: [], versions: {}, processes: [] },
        ]
      : null,
  };
}

describe('bench verdicts', () => {
  const scenarios = [
    scenario('checkout', 1, 30, 33),
    scenario('restate', 1, 10, 100),
    scenario('checkout', 32, 300, 100),
    scenario('dbos', 32, 150, 210),
    scenario('replay-checkout', 1, 1, 1000),
    scenario('replay-restate', 1, 2.5, 400),
  ];

  it('judges each figure against its target and moonshot, from the run alone', () => {
    const verdicts = computeVerdicts(run(scenarios, true));
    expect(verdicts.map((v) => [v.figure.split(' ')[0], v.value, v.met])).toEqual([
      ['checkout', 3, 'missed'],
      ['checkout', 100 / 210, 'missed'],
      ['R1:', 0.92, 'target'],
      ['R2', 1.2, 'target'],
      ['replay', 0.4, 'moonshot'],
      ['contention:', 1, 'moonshot'],
    ]);
    expect(verdicts[2]!.note).toBe('worst at payment c=32');
  });

  it("shows the engine's own floor beside each peer figure: bare Temporal divided by the same peer number", () => {
    const withBare = [...scenarios, scenario('bare3', 1, 20, 50), scenario('bare3', 32, 250, 105)];
    const [vsRestate, vsDbos] = computeVerdicts(run(withBare, true));
    expect(vsRestate!.note).toBe('30.0 ms ÷ 10.0 ms; bare Temporal, 3 no-op steps: 2.00×');
    expect(vsDbos!.note).toBe('100.0/s ÷ 210.0/s; bare Temporal, 3 no-op steps: 0.50');
    // Without a bare run, the note is the figure's own numbers only.
    expect(computeVerdicts(run(scenarios, true))[0]!.note).toBe('30.0 ms ÷ 10.0 ms');
  });

  it('says a peer figure was not measured when the run had no peers', () => {
    const verdicts = computeVerdicts(run(scenarios, false));
    expect(verdicts.filter((v) => v.met === 'not measured').map((v) => v.figure)).toEqual([
      "checkout c=1 p50 ÷ Restate's (same run)",
      "checkout c=32 ops/s ÷ DBOS's (same run)",
      "replay p50 ÷ Restate's replay p50 (checkout, c=1)",
    ]);
    expect(verdicts[0]!.note).toContain('--peers');
  });

  it('fails the contention figure when a key ran twice or moved money twice', () => {
    const twice = run(scenarios, true);
    twice.contention = [{ executions: 1, charges: 2, unitsTaken: 1, requests: 100 }] as BenchResults['contention'];
    const verdict = computeVerdicts(twice).at(-1)!;
    expect([verdict.now, verdict.met]).toEqual(['1, 2', 'missed']);
  });
});

describe('ablation plan', () => {
  const tuning: Tuning = {
    source: 'test',
    settings: [
      { name: 'transfer', args: ['--dynamic-config-value', 'bench.test.pollRPS=1000'], why: '' },
      { name: 'wal', args: ['--sqlite-pragma', 'bench_test=1'], why: '' },
    ],
  };

  it('runs every setting, then none, then each one off in turn', () => {
    expect(ablationPlan(tuning)).toEqual([
      { name: ALL_ON, without: [] },
      { name: ALL_OFF, without: ['transfer', 'wal'] },
      { name: 'without transfer', without: ['transfer'] },
      { name: 'without wal', without: ['wal'] },
    ]);
  });
});

describe('where the time goes', () => {
  const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
  const marker = (type: string, completedMs: number) => ({
    markerName: 'core_local_activity',
    details: {
      data: {
        payloads: [
          {
            data: Buffer.from(JSON.stringify({ activity_type: type, complete_time: at(completedMs) })),
          },
        ],
      },
    },
  });

  it('reads a local activity step from its task start and the previous completion its marker records', () => {
    const events = [
      { eventId: 1, eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, eventTime: at(1_000_000) },
      { eventId: 2, eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, eventTime: at(1_000_000) },
      {
        eventId: 3,
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
        eventTime: at(1_000_004),
        workflowTaskStartedEventAttributes: { scheduledEventId: 2 },
      },
      {
        eventId: 4,
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        eventTime: at(1_000_030),
        workflowTaskCompletedEventAttributes: { startedEventId: 3 },
      },
      {
        eventId: 5,
        eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
        eventTime: at(1_000_030),
        markerRecordedEventAttributes: marker('reserveItems', 1_000_010),
      },
      {
        eventId: 6,
        eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
        eventTime: at(1_000_030),
        markerRecordedEventAttributes: marker('chargePayment', 1_000_025),
      },
      { eventId: 7, eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, eventTime: at(1_000_031) },
    ].map((e) => HistoryEvent.fromObject(e));
    const { phases, stepNames, workflowTasks } = phasesOf(events);
    expect(stepNames).toEqual(['reserve_items', 'charge_payment']);
    expect(workflowTasks).toBe(1);
    expect(Object.fromEntries(phases)).toEqual({
      'workflow tasks: scheduled → started (dispatch)': 4,
      'workflow tasks: started → completed (worker)': 26,
      'step 1: local activity (inside its workflow task)': 6,
      'step 2: local activity (inside its workflow task)': 15,
      'start → close': 31,
    });
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
