// What the chaos run counts, as the real processes write it: the sandbox bank (in this
// process, on its own SQLite file, on loopback) reports each injected fault and each
// request's start and end as structured fields, and the API does the same for its
// requests. The run's readers count from those fields alone: a line that only says it in
// words counts for nothing.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { countDownstreamFailure, countFault, InFlight, logEntryOf, newLogCounts } from '../../tools/chaos/log-taps.js';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { startBank, uniqueKey, type Bank } from '../bank/helpers.js';
import { deadEngine, type DeadEngine } from '../support/dead-engine.js';

/** A pino logger whose lines are kept, and handed to `onLine` as they are written. */
function capturingLogger(onLine: (line: string) => void = () => undefined) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        lines.push(line);
        onLine(line);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

async function networkError(p: Promise<unknown>): Promise<boolean> {
  return p.then(
    () => false,
    () => true,
  );
}

describe("the sandboxes' structured events", () => {
  const inFlight = new InFlight(10_000);
  const counts = newLogCounts();
  const captured = capturingLogger((line) => {
    const entry = logEntryOf(line);
    if (!entry) return;
    inFlight.feed(entry);
    countFault(counts, 'bank', entry);
  });
  let bank: Bank;
  let account: string;
  const charge = () => bank.charge(uniqueKey(), { account, amount: 100, currency: 'EUR' });

  beforeAll(async () => {
    // Every fault that is set fires: the draw is always 0.
    bank = await startBank({ faults: true, logger: captured.logger, random: () => 0 });
    account = await bank.openAccount(1_000_000);
  });
  afterAll(async () => {
    await bank.close();
  });

  it('count each fault that fired by its name, and a request as in flight from its arrival to its answer or its cut', async () => {
    await bank.putFaults({ ...NO_FAULTS, dropResponseAfterCommit: 1 });
    expect(await networkError(charge())).toBe(true);
    await bank.putFaults({ ...NO_FAULTS, failBeforeCommit: 1 });
    expect((await charge()).status).toBe(503);
    await bank.putFaults({ ...NO_FAULTS, down: true });
    expect(await networkError(charge())).toBe(true);

    await bank.putFaults({ ...NO_FAULTS, delayMs: 400 });
    const delayed = charge();
    await inFlight.busy(5_000);
    // Held by the delay, before its commit: the one POST in flight.
    expect(inFlight.count()).toBe(1);
    expect((await delayed).status).toBe(201);
    await bank.putFaults(NO_FAULTS);
    expect((await charge()).status).toBe(201);

    expect(counts).toEqual({
      droppedResponses: { bank: 1, reservations: 0 },
      crashedAfterCommit: { bank: 0, reservations: 0 },
      failedBeforeCommit: { bank: 1, reservations: 0 },
      refusedWhileDown: { bank: 1, reservations: 0 },
      delayed: { bank: 1, reservations: 0 },
      downstreamCallsFailed: {},
    });
    // Every request ended: answered, or cut by the drop and the downtime.
    expect(inFlight.count()).toBe(0);
    const events = captured.lines.map(logEntryOf).map((e) => e?.event);
    expect(events.filter((e) => e === 'request_cut')).toHaveLength(2);
  });

  it('count nothing from a line that only says it in words', () => {
    const before = structuredClone(counts);
    for (const line of [
      '{"level":40,"msg":"fault: committed, dropping the response"}',
      '{"level":40,"msg":"fault: committed, crashing now (SIGKILL)","event":"fault_injected"}',
      '{"level":40,"event":"fault_injected","fault":"notAFault"}',
      'fault: down, resetting the connection',
    ]) {
      const entry = logEntryOf(line);
      if (entry) countFault(counts, 'bank', entry);
    }
    expect(counts).toEqual(before);
    countFault(counts, 'reservations', logEntryOf('{"event":"fault_injected","fault":"crashAfterCommit"}')!);
    expect(counts.crashedAfterCommit).toEqual({ bank: 0, reservations: 1 });
  });

  it("count the workers' failed downstream calls by how they failed", () => {
    const worker = newLogCounts();
    for (const line of [
      '{"event":"downstream_call_failed","result":"unavailable"}',
      '{"event":"downstream_call_failed","result":"unavailable"}',
      '{"event":"downstream_call_failed","result":"refused"}',
      '{"msg":"Activity failed"}',
    ])
      countDownstreamFailure(worker, logEntryOf(line)!);
    expect(worker.downstreamCallsFailed).toEqual({ unavailable: 2, refused: 1 });
  });
});

describe("the API's request events", () => {
  let engine: DeadEngine;
  let app: App;
  const captured = capturingLogger();

  beforeAll(async () => {
    engine = deadEngine();
    app = buildApp({
      config: loadApiConfig({ RETRYSAFE_ENGINE_TIMEOUT: '300ms', LOG_LEVEL: 'info' }),
      client: engine.client,
      namespace: 'default',
      logger: captured.logger,
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await engine.close();
  });

  it('mark a POST in flight when it arrives and over once answered, keeping the messages people read', async () => {
    const inFlight = new InFlight(10_000);
    // Let through by admission, then refused for its body: in flight from admission to its answer.
    const admitted = await app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { 'idempotency-key': 'log-events-1' },
      payload: { account: 'acc_alice' },
    });
    expect(admitted.statusCode).toBe(400);
    // Refused by its header check before admission: answered at once, never in flight.
    const unkeyed = await app.inject({ method: 'POST', url: '/v1/payments', payload: { account: 'acc_alice' } });
    expect(unkeyed.statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    const entries = captured.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const post = entries.filter((e) => (e.req as { method?: string } | undefined)?.method === 'POST');
    expect(post).toEqual([expect.objectContaining({ event: 'request_received', msg: 'incoming request', key: 'log-events-1' })]);
    const finished = entries.filter((e) => e.event === 'request_finished');
    expect(finished.map((e) => (e.res as { statusCode?: number }).statusCode)).toEqual([400, 400, 200]);
    expect(finished[0]).toMatchObject({ reqId: post[0]!.reqId, msg: 'request completed' });

    // Fed up to the POST's arrival, then the rest.
    const arrival = entries.indexOf(post[0]!) + 1;
    for (const line of captured.lines.slice(0, arrival)) inFlight.feed(logEntryOf(line)!);
    expect(inFlight.count()).toBe(1);
    for (const line of captured.lines.slice(arrival)) inFlight.feed(logEntryOf(line)!);
    expect(inFlight.count()).toBe(0);
  });
});
