// Runs a saga on Temporal's time-skipping test server with scripted activities. Every
// deadline, retry back-off and attention timer passes in server time (a step's first
// attempt is local, its retries are regular activities), so a fence at a 60 s deadline or
// a compensation failing for minutes takes a moment of real time. The workflow code is the
// bundle the worker runs; only the activities are stand-ins, and they refuse as the real
// ones do (a DownstreamRefusal carrying the downstream's problem code), so a step whose
// definition stops listing a business code fails here. A run may
// also be cancelled, before its first step or while a given activity runs. (Completion
// webhooks are tested on the real dev server, test/e2e: their trigger is the server's
// parent close policy, which this test server does not apply.)
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { expect, inject } from 'vitest';
import { downstreamRefusal, DownstreamUnavailableError } from '../../activities/errors.js';
import { programRefused } from '../../activities/steps.js';
import { ensureTemporalTestServer } from '../support/temporal-test-server.js';
import { useForFile } from '../support/use-for-file.js';
import type { Static } from 'typebox';
import {
  SearchAttributes,
  type DownstreamTarget,
  type NotificationInput,
  type OperationOutcome,
  type OperationSettings,
  type OperationType,
  type ProgressMemo,
} from '../../workflows/contracts.js';
import type { CheckoutRequest } from '../../workflows/definitions/checkout.js';
import type { PaymentRequest } from '../../workflows/definitions/payment.js';
import { operationRef, type OperationRef } from '../../workflows/identity.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { programFor } from '../../common/programs.js';

/**
 * The activity type a step or compensation ran as: a declared call's step or compensation
 * name (`charge_payment`, `reverse_charge`), the hand-written names operations started
 * before programs were recorded still schedule (`chargePayment`, `callService`), or a
 * webhook's activity.
 */
export type ActivityName = string;

/**
 * How a scripted activity answers each attempt: `ok`; `unavailable` (a transient failure
 * on every attempt, so the step runs into its deadline); a final refusal with the
 * downstream's problem code on every attempt (`{ refuse: 'insufficient_funds' }`, a fenced
 * key); or a failure for the first `failFirst` attempts (transient, or non-retryable so the
 * workflow itself must run it again), then `ok`.
 */
export type Answer =
  | 'ok'
  | 'unavailable'
  | { refuse: string }
  | { failFirst: number; as: 'unavailable' | 'non-retryable' }
  /** As the activity layer refuses a call this worker cannot make (a service or activity it lacks), before the call. */
  | { lacks: string };

export interface Call {
  activity: ActivityName;
  operation: OperationRef;
  /** The key a step or compensation sent downstream; none for the webhook's activities. */
  downstreamKey?: string;
  /** The request beside the target (a charge, a hold), when the activity takes one. */
  request?: unknown;
  attempt: number;
}

export interface SagaRun {
  outcome: OperationOutcome;
  /** Every activity attempt, in the order the worker ran them. */
  calls: Call[];
  /**
   * The activity summaries in history order, as the Temporal UI timeline shows them: a
   * local activity's on its marker (recorded when it ends), a regular one's on its
   * scheduled event.
   */
  summaries: string[];
  /** The execution's start time, as a description reports it. */
  startTime: Date;
  /** Activity types scheduled as regular activities (on the task queue), in order. */
  scheduled: string[];
  memo: Partial<ProgressMemo>;
  searchAttributes: { status?: unknown; step?: unknown; needsAttention?: unknown };
  /** The current details the workflow serves to the Temporal UI. */
  details: string;
}

/** The marker a local activity's outcome is recorded in. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/**
 * Where a run is cancelled: before its first step; while the named activity's first call
 * runs; or while its `call`-th call runs (2: the first retry, made as a regular activity
 * after a local first attempt that failed).
 */
export type CancelAt = 'start' | ActivityName | { activity: ActivityName; call: number };

/** The reason the API sends with a cancel, as the saga must show it. */
export const CANCEL_REASON = 'by tenant acme through the API at 2030-01-01T00:00:00.000Z';

export const SETTINGS: OperationSettings = { stepDeadlineMs: 60_000, attentionAfterMs: 300_000, holdTtlSeconds: 900 };
export const CHARGE: Static<typeof PaymentRequest> = { account: 'acc_alice', amount: 4200, currency: 'EUR' };
export const CART: Static<typeof CheckoutRequest> = { ...CHARGE, items: [{ sku: 'sku_book', quantity: 2 }] };

/** What each activity answers when it succeeds, as the real downstreams' answers read. */
const OK: Record<ActivityName, unknown> = {
  reserve_items: { id: 'res_1', status: 'held', replayed: false },
  charge_payment: { id: 'ch_1', status: 'captured', replayed: false },
  confirm_reservation: { status: 'confirmed', reservationId: 'res_1', replayed: false },
  reverse_charge: { status: 'reversed', chargeId: 'ch_1', refunded: 4200, replayed: false },
  release_reservation: { status: 'released', reservationId: 'res_1', replayed: false },
  // As the hand-written activities of earlier releases answered.
  reserveItems: { reservationId: 'res_1' },
  chargePayment: { chargeId: 'ch_1' },
  confirmReservation: { status: 'confirmed', reservationId: 'res_1' },
  reverseCharge: { status: 'reversed', chargeId: 'ch_1', refunded: 4200 },
  releaseReservation: { status: 'released', reservationId: 'res_1' },
  callService: { id: 'tx_1', status: 'reversed', replayed: false },
  prepareCompletionEvent: { body: '{"type":"operation.succeeded"}' },
  deliverCompletionEvent: { attempts: 1 },
};

/** Which forward activity each compensation undoes, for the scripted ledgers. */
const UNDOES: Readonly<Record<ActivityName, ActivityName>> = {
  reverse_charge: 'charge_payment',
  release_reservation: 'reserve_items',
  reverseCharge: 'chargePayment',
  releaseReservation: 'reserveItems',
};

function scriptedActivities(
  script: Partial<Record<ActivityName, Answer>>,
  onCall: (activity: ActivityName) => Promise<void>,
): { activities: Record<string, (...args: never[]) => Promise<unknown>>; calls: Call[] } {
  const calls: Call[] = [];
  async function answer(
    activity: ActivityName,
    target: { operation: OperationRef; downstreamKey?: string },
    request?: unknown,
  ): Promise<unknown> {
    const { attempt } = Context.current().info;
    calls.push({
      activity,
      operation: target.operation,
      ...(target.downstreamKey === undefined ? {} : { downstreamKey: target.downstreamKey }),
      attempt,
      ...(request === undefined ? {} : { request }),
    });
    await onCall(activity);
    const scripted = script[activity] ?? 'ok';
    const failed = calls.filter((c) => c.activity === activity).length;
    if (scripted === 'unavailable') throw new DownstreamUnavailableError(`${activity}: downstream answered 503`);
    if (typeof scripted === 'object' && 'refuse' in scripted) {
      throw downstreamRefusal(`${activity}: refused (${scripted.refuse})`, 422, scripted.refuse);
    }
    if (typeof scripted === 'object' && 'lacks' in scripted) {
      throw programRefused(`this worker cannot run the operation's definition: it has ${scripted.lacks}`);
    }
    if (scripted !== 'ok' && failed <= scripted.failFirst) {
      if (scripted.as === 'unavailable') throw new DownstreamUnavailableError(`${activity}: downstream answered 503`);
      throw ApplicationFailure.nonRetryable(`${activity}: gave up`, 'GaveUp');
    }
    return answerOf(activity, target.downstreamKey);
  }
  // As the real downstreams keep their ledgers: a forward call that answered leaves an effect
  // under its key, and a compensation undoes it (reversed, released) or, finding none,
  // leaves a tombstone (fenced).
  const effects = new Set<string>();
  function answerOf(activity: ActivityName, downstreamKey: string | undefined): unknown {
    const ok = OK[activity] ?? { id: `${activity}_1`, status: 'done', replayed: false };
    if (downstreamKey === undefined) return ok;
    const undoes = UNDOES[activity];
    if (undoes === undefined) {
      if (activity !== 'callService') effects.add(`${activity} ${downstreamKey}`);
      return ok;
    }
    return effects.has(`${undoes} ${downstreamKey}`) ? ok : { ...(ok as object), status: 'fenced' };
  }
  const byName = (name: ActivityName) => async (target: DownstreamTarget, input?: unknown) => answer(name, target, input);
  const activities = {
    // A declared call runs as its step's or compensation's own type; the request it records is the body it sends.
    default: async (target: DownstreamTarget, call?: { body?: unknown }) =>
      answer(Context.current().info.activityType, target, call?.body),
    ...Object.fromEntries(
      ['chargePayment', 'reverseCharge', 'reserveItems', 'confirmReservation', 'releaseReservation', 'callService'].map((n) => [
        n,
        byName(n),
      ]),
    ),
    prepareCompletionEvent: async (input: NotificationInput) => answer('prepareCompletionEvent', input, input),
    deliverCompletionEvent: async (operation: OperationRef, event: unknown) =>
      answer('deliverCompletionEvent', { operation }, event),
  };
  return { activities, calls };
}

/** The test server knows no custom search attribute until it is told, as a namespace would be. */
async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  const { IndexedValueType } = proto.temporal.api.enums.v1;
  const types = { KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL };
  const searchAttributes = Object.fromEntries(
    Object.values(SearchAttributes).map((k) => [k.name, types[k.type as keyof typeof types]]),
  );
  await env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes });
}

/** The time-skipping server for the file that calls this: started in its beforeAll, torn down in its afterAll. */
export function useTimeSkipping(): TestWorkflowEnvironment {
  return useForFile('the time-skipping test server', startTimeSkipping, (env) => env.teardown());
}

async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  try {
    // Activities in these tests fail on purpose; the SDK's warning per failed attempt is noise.
    const quiet = () => undefined;
    Runtime.install({
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m) => console.error(m) },
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
  } catch {
    // already installed in this process
  }
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: ensureTemporalTestServer() } },
  });
  await registerSearchAttributes(env);
  return env;
}

/** Runs one operation to its end on its own task queue, with the activities answering as scripted. */
export async function runSaga(
  env: TestWorkflowEnvironment,
  type: OperationType,
  opts: {
    request: Record<string, unknown>;
    script?: Partial<Record<ActivityName, Answer>>;
    settings?: Partial<OperationSettings>;
    /** Values of the definition's settings other than its defaults (the hold time). */
    definitionSettings?: Record<string, number>;
    cancel?: CancelAt;
    /** Start it as operations were started before they carried their program. */
    legacy?: boolean;
    /** Start it with this program instead of its definition's (a recorded program is input, not trust). */
    program?: unknown;
  },
): Promise<SagaRun & { operation: OperationRef }> {
  const operation = operationRef('acme', `order-${randomUUID().slice(0, 8)}`);
  const taskQueue = `saga-${randomUUID()}`;
  // Temporal's own cancellation, with the reason the API sends.
  const requestCancel = () =>
    env.client.workflowService.requestCancelWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: operation.workflowId },
      requestId: randomUUID(),
      reason: CANCEL_REASON,
    });
  const cancelAt = typeof opts.cancel === 'object' ? opts.cancel : { activity: opts.cancel, call: 1 };
  const { activities, calls } = scriptedActivities(opts.script ?? {}, async (activity) => {
    if (cancelAt.activity === activity && calls.filter((c) => c.activity === activity).length === cancelAt.call) {
      await requestCancel();
    }
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
  });
  const settings = { ...SETTINGS, ...opts.settings };
  const definition = builtInCatalog.get(type);
  if (!definition) throw new Error(`no built-in operation ${type}`);
  const program = opts.legacy ? {} : { program: opts.program ?? programFor(definition, opts.definitionSettings) };
  const handle = await env.client.workflow.start(type, {
    taskQueue,
    workflowId: operation.workflowId,
    args: [{ tenant: operation.tenant, key: operation.key, request: opts.request, settings, ...program }],
  });
  // Before any worker polls: the first activation carries the start and the cancel together.
  if (opts.cancel === 'start') await requestCancel();
  return worker.runUntil(async () => {
    const outcome = (await handle.result()) as OperationOutcome;
    const [description, history, metadata] = await Promise.all([
      handle.describe(),
      handle.fetchHistory(),
      handle.query<{ currentDetails?: string | null }>('__temporal_workflow_metadata'),
    ]);
    const summaries = (history.events ?? [])
      .filter(
        (e) => e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER,
      )
      .map((e) => (e.userMetadata?.summary ? defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary) : ''));
    const attributes = description.typedSearchAttributes;
    return {
      operation,
      outcome,
      calls,
      summaries,
      memo: (description.memo ?? {}) as Partial<ProgressMemo>,
      searchAttributes: {
        status: attributes.get(SearchAttributes.OperationStatus),
        step: attributes.get(SearchAttributes.OperationStep),
        needsAttention: attributes.get(SearchAttributes.NeedsAttention),
      },
      details: metadata.currentDetails ?? '',
      startTime: description.startTime,
      scheduled: (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    };
  });
}

/** A failed outcome: its code, the compensations that ran (in order), and its message when given (the text, or a pattern). */
export function expectFailed(run: SagaRun, code: string, compensations: string[], message?: string | RegExp): void {
  expect(run.outcome).toMatchObject({ status: 'failed', error: { code, compensations } });
  const said = run.outcome.status === 'failed' ? run.outcome.error.message : undefined;
  if (typeof message === 'string') expect(said).toBe(message);
  else if (message) expect(said).toMatch(message);
}

/** Each step's status in the outcome, in step order: `reserve_items:compensated charge_payment:fenced ...`. */
export function statuses(run: SagaRun): string {
  return run.outcome.steps.map((s) => `${s.name}:${s.status}`).join(' ');
}

/** A checkout's activities when all three steps ran and both compensations then undid them, in reverse. */
export const CHECKOUT_RAN_THEN_UNDONE: ActivityName[] = [
  'reserve_items',
  'charge_payment',
  'confirm_reservation',
  'reverse_charge',
  'release_reservation',
];

/** The activities in the order they were first called, each once (retries folded). */
export function activityOrder(calls: Call[]): ActivityName[] {
  return calls.filter((c, i) => i === 0 || calls[i - 1]!.activity !== c.activity).map((c) => c.activity);
}
