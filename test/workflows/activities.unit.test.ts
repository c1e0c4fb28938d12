// The activities' side of "a key flows one way": each is handed its downstream key and
// its operation, sends that key, logs the request id it sends, and refuses an input
// without a key rather than call a downstream with none.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBankClient, type BankClient } from '../../activities/bank.js';
import { createActivities } from '../../activities/index.js';
import { downstreamRefusal, DownstreamUnavailableError } from '../../activities/errors.js';
import type { ReservationsClient } from '../../activities/reservations.js';
import type { DownstreamTarget } from '../../workflows/contracts.js';
import { operationRef } from '../../workflows/identity.js';
import { listenOnFreePort } from '../support/loopback.js';

const operation = operationRef('acme', 'order-42');
const target: DownstreamTarget = { operation, downstreamKey: 'acme/order-42/charge', step: 'charge_payment' };
const charge = { account: 'acc_alice', amount: 1250, currency: 'EUR' };
const info = { activityId: '7', attempt: 3, workflowExecution: { workflowId: operation.workflowId, runId: 'run-1' } };

/** A bank on loopback that records what each request carried. */
const received: Array<{ url?: string; headers: IncomingHttpHeaders }> = [];
const bankServer = createServer((req, res) => {
  received.push({ url: req.url, headers: req.headers });
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'ch_1' }));
  });
});
let bankUrl = '';
beforeAll(async () => {
  bankUrl = await listenOnFreePort(bankServer);
});
afterAll(() => new Promise<void>((resolve) => bankServer.close(() => resolve())));

function capturingLogger(lines: Array<{ message: string; meta?: Record<string, unknown> }>): Logger {
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

/** Not called in these tests (a call would throw). */
const unused = {} as ReservationsClient;
const noServices = { urls: new Map<string, string>(), timeoutMs: 2_000 };

describe('activities', () => {
  it('send the downstream key they are handed, and log the X-Request-Id they send with the operation', async () => {
    const lines: Array<{ message: string; meta?: Record<string, unknown> }> = [];
    const activities = createActivities({
      bank: createBankClient({ baseUrl: bankUrl, timeoutMs: 2_000 }),
      reservations: unused,
      services: noServices,
    });
    const env = new MockActivityEnvironment(info, { logger: capturingLogger(lines) });
    await expect(env.run(activities.chargePayment, target, charge)).resolves.toEqual({ chargeId: 'ch_1' });

    expect(received).toHaveLength(1);
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

  it('report a failed call with a structured event saying how it failed: unavailable (retried) or refused (final)', async () => {
    const lines: Array<{ message: string; meta?: Record<string, unknown> }> = [];
    let answer: Error = new DownstreamUnavailableError('bank answered 503');
    const bank: BankClient = {
      charge: async () => {
        throw answer;
      },
      reverse: async () => ({ status: 'reversed', chargeId: null, refunded: 0 }),
    };
    const activities = createActivities({ bank, reservations: unused, services: noServices });
    const env = new MockActivityEnvironment(info, { logger: capturingLogger(lines) });
    await expect(env.run(activities.chargePayment, target, charge)).rejects.toThrow('bank answered 503');
    answer = downstreamRefusal('insufficient funds', 422, 'insufficient_funds');
    await expect(env.run(activities.chargePayment, target, charge)).rejects.toThrow('insufficient funds');
    const failed = lines.filter((l) => l.meta?.event === 'downstream_call_failed');
    expect(failed.map((l) => l.meta)).toEqual([
      expect.objectContaining({ result: 'unavailable', workflowId: 'acme/order-42', step: 'charge_payment' }),
      expect.objectContaining({ result: 'refused', workflowId: 'acme/order-42', step: 'charge_payment' }),
    ]);
  });

  it("put a declared call's key into its path as it is, whatever `$` patterns the key holds", async () => {
    received.length = 0;
    const activities = createActivities({
      bank: unused as unknown as BankClient,
      reservations: unused,
      services: { urls: new Map([['shipping', bankUrl]]), timeoutMs: 2_000 },
    });
    const env = new MockActivityEnvironment(info, { logger: capturingLogger([]) });
    const key = "acme/o$&r$$d$'e$`r/ship";
    const call = { service: 'shipping', method: 'POST' as const, path: '/shipments/{key}/cancel' };
    await env.run(activities.callService, { ...target, downstreamKey: key }, { ...call, undo: true as const });
    expect(received.map((r) => decodeURIComponent(r.url!))).toEqual([`/shipments/${key}/cancel`]);
    expect(received[0]!.headers['idempotency-key']).toBe(key);
  });

  it('refuse, for good, an input without a downstream key (as an older workflow scheduled it), and call nothing', async () => {
    const calls: string[] = [];
    const bank: BankClient = {
      charge: async (key) => (calls.push(`charge ${key}`), { chargeId: 'ch_1', replayed: false }),
      reverse: async (key) => (calls.push(`reverse ${key}`), { status: 'reversed', chargeId: null, refunded: 0 }),
    };
    const activities = createActivities({ bank, reservations: unused, services: noServices });
    const env = new MockActivityEnvironment(info, { logger: capturingLogger([]) });
    const legacy = { key: 'acme/order-42/charge' } as unknown as DownstreamTarget;
    const refusal = await env.run(activities.reverseCharge, legacy).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(ApplicationFailure);
    expect(refusal).toMatchObject({ type: 'InvalidActivityInput', nonRetryable: true });
    expect(calls).toEqual([]);
  });
});
