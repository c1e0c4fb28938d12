// The activities' side of "a key flows one way" and of "a recorded program is input, not
// trust": each step activity is handed its downstream key and its operation, sends that key,
// logs the request id it sends, refuses an input without a key, and refuses (before any
// call) a program that needs what this worker lacks, or a declared call it may not make.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import type { DownstreamTarget } from '../../workflows/contracts.js';
import { operationRef } from '../../workflows/identity.js';
import { listenOnFreePort } from '../support/loopback.js';

const operation = operationRef('acme', 'order-42');
const target: DownstreamTarget = { operation, downstreamKey: 'acme/order-42/charge', step: 'charge_payment' };
const charge = { account: 'acc_alice', amount: 1250, currency: 'EUR' };
const chargeCall = { service: 'bank', method: 'POST' as const, path: '/charges', body: charge };
const info = (activityType: string) => ({
  activityId: '7',
  activityType,
  attempt: 3,
  workflowExecution: { workflowId: operation.workflowId, runId: 'run-1' },
});

/** A bank on loopback that records what each request carried, and answers as told. */
const received: Array<{ url?: string; headers: IncomingHttpHeaders; body: string }> = [];
let answer: { status: number; body: unknown } = { status: 201, body: { id: 'ch_1', status: 'captured' } };
const bankServer = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    received.push({ url: req.url, headers: req.headers, body });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
});
let bankUrl = '';
beforeAll(async () => {
  bankUrl = await listenOnFreePort(bankServer);
});
afterAll(() => new Promise<void>((resolve) => bankServer.close(() => resolve())));
beforeEach(() => {
  received.length = 0;
  answer = { status: 201, body: { id: 'ch_1', status: 'captured' } };
});

type Lines = Array<{ message: string; meta?: Record<string, unknown> }>;

function capturingLogger(lines: Lines): Logger {
  const log = (_level: string, message: string, meta?: Record<string, unknown>) => void lines.push({ message, meta });
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

function activitiesWith(services: Record<string, string> = { bank: bankUrl }, stepActivities = {}) {
  return createActivities({ services: { urls: new Map(Object.entries(services)), timeoutMs: 2_000 }, stepActivities });
}

/** Runs the activity as the worker would under `activityType`, returning its answer or the failure it raised. */
async function run(activityType: string, fn: (...args: never[]) => Promise<unknown>, args: unknown[], lines: Lines = []) {
  const env = new MockActivityEnvironment(info(activityType), { logger: capturingLogger(lines) });
  return env.run(fn as (...a: unknown[]) => Promise<unknown>, ...args).catch((err: unknown) => err);
}

describe('a declared call (the default activity, under its step name)', () => {
  it('sends the downstream key it is handed, and logs the X-Request-Id it sends with the operation', async () => {
    const lines: Lines = [];
    const activities = activitiesWith();
    await expect(run('charge_payment', activities.default, [target, chargeCall], lines)).resolves.toEqual({
      id: 'ch_1',
      status: 'captured',
      replayed: false,
    });
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual(charge);
    expect(received[0]!.headers).toMatchObject({
      'idempotency-key': 'acme/order-42/charge',
      'x-request-id': 'acme/order-42:7#3',
    });
    const answered = lines.find((l) => l.message === 'charge_payment answered');
    expect(answered?.meta).toMatchObject({
      tenant: 'acme',
      key: 'order-42',
      workflowId: 'acme/order-42',
      step: 'charge_payment',
      downstreamKey: 'acme/order-42/charge',
      requestId: received[0]!.headers['x-request-id'],
    });
  });

  it('reports a failed call with a structured event saying how it failed: unavailable (retried) or refused (final)', async () => {
    const lines: Lines = [];
    const activities = activitiesWith();
    answer = { status: 503, body: { code: 'down' } };
    expect(await run('charge_payment', activities.default, [target, chargeCall], lines)).toMatchObject({
      message: expect.stringContaining('bank answered 503'),
    });
    answer = { status: 402, body: { code: 'insufficient_funds' } };
    expect(await run('charge_payment', activities.default, [target, chargeCall], lines)).toMatchObject({
      type: 'DownstreamRefusal',
      nonRetryable: true,
      details: [{ status: 402, code: 'insufficient_funds' }],
    });
    const failed = lines.filter((l) => l.meta?.event === 'downstream_call_failed');
    expect(failed.map((l) => l.meta)).toEqual([
      expect.objectContaining({ result: 'unavailable', workflowId: 'acme/order-42', step: 'charge_payment' }),
      expect.objectContaining({ result: 'refused', workflowId: 'acme/order-42', step: 'charge_payment' }),
    ]);
  });

  it('puts the key into its path as it is, whatever `$` patterns the key holds', async () => {
    const activities = activitiesWith({ shipping: bankUrl });
    const key = "acme/o$&r$$d$'e$`r/ship";
    const call = { service: 'shipping', method: 'POST' as const, path: '/shipments/{key}/cancel', undo: true as const };
    await run('cancel_shipment', activities.default, [{ ...target, downstreamKey: key }, call]);
    expect(received.map((r) => decodeURIComponent(r.url!))).toEqual([`/shipments/${key}/cancel`]);
    expect(received[0]!.headers['idempotency-key']).toBe(key);
  });

  it('refuses, before any call, a path that could name another host or route, or a method no declared call has', async () => {
    const activities = activitiesWith();
    for (const bad of [
      { ...chargeCall, path: '@evil.example/charges' },
      { ...chargeCall, path: '//evil.example/charges' },
      { ...chargeCall, path: '/charges/../accounts' },
      { ...chargeCall, method: 'GET' },
    ]) {
      expect(await run('charge_payment', activities.default, [target, bad])).toMatchObject({
        type: 'ProgramRefused',
        nonRetryable: true,
      });
    }
    expect(received).toEqual([]);
  });

  it('refuses an activity type this worker does not register (its input is no declared call), and calls nothing', async () => {
    const activities = activitiesWith();
    const refusal = await run('shipParcel', activities.default, [target, { parcel: 1 }]);
    expect(refusal).toMatchObject({
      type: 'ProgramRefused',
      nonRetryable: true,
      message: 'this worker registers no activity shipParcel',
    });
    expect(received).toEqual([]);
  });
});

describe("an operation's first call", () => {
  it('is refused, naming them, when the program needs a service or an activity this worker lacks, before any call', async () => {
    const lines: Lines = [];
    const activities = activitiesWith();
    const first = { ...target, needs: { services: ['bank', 'shipping'], activities: ['shipParcel'] } };
    const refusal = await run('charge_payment', activities.default, [first, chargeCall], lines);
    expect(refusal).toBeInstanceOf(ApplicationFailure);
    expect(refusal).toMatchObject({
      type: 'ProgramRefused',
      nonRetryable: true,
      details: [{ services: ['shipping'], activities: ['shipParcel'] }],
    });
    expect((refusal as Error).message).toBe(
      "this worker cannot run the operation's definition: it has no base URL for service shipping (RETRYSAFE_SERVICES); " +
        "no activity shipParcel (an operations folder's activities.ts)",
    );
    expect(received).toEqual([]);
    expect(lines.find((l) => l.meta?.event === 'program_refused')?.meta).toMatchObject({ services: ['shipping'] });
  });

  it('goes ahead when the worker has everything: its services, and the activities it registers by name', async () => {
    const shipped: unknown[] = [];
    const activities = activitiesWith(
      { bank: bankUrl },
      { shipParcel: async (_t: DownstreamTarget, input: unknown) => shipped.push(input) },
    );
    const first = { ...target, needs: { services: ['bank'], activities: ['shipParcel', 'chargePayment'] } };
    expect(await run('charge_payment', activities.default, [first, chargeCall])).toMatchObject({ id: 'ch_1' });
    await run('shipParcel', (activities as unknown as Record<string, () => Promise<unknown>>).shipParcel!, [
      first,
      { parcel: 1 },
    ]);
    expect(shipped).toEqual([{ parcel: 1 }]);
  });
});

describe('the activities operations started before programs were recorded still schedule', () => {
  it('chargePayment: the declared charge, answered as the hand-written activity answered', async () => {
    const activities = activitiesWith();
    expect(await run('chargePayment', activities.chargePayment, [target, charge])).toEqual({ chargeId: 'ch_1' });
    expect(received.map((r) => [r.url, JSON.parse(r.body)])).toEqual([['/charges', charge]]);
    answer = { status: 200, body: { status: 'reversed', chargeId: 'ch_1', refunded: 1250 } };
    expect(await run('reverseCharge', activities.reverseCharge, [target])).toEqual({
      status: 'reversed',
      chargeId: 'ch_1',
      refunded: 1250,
    });
    expect(received[1]!.url).toBe(`/charges/${encodeURIComponent(target.downstreamKey)}/reverse`);
  });

  it('refuse, for good, an input without a downstream key (as an older workflow scheduled it), and call nothing', async () => {
    const activities = activitiesWith();
    const legacy = { key: 'acme/order-42/charge' } as unknown as DownstreamTarget;
    const refusal = await run('reverseCharge', activities.reverseCharge, [legacy]);
    expect(refusal).toBeInstanceOf(ApplicationFailure);
    expect(refusal).toMatchObject({ type: 'InvalidActivityInput', nonRetryable: true });
    expect(received).toEqual([]);
  });
});
