// The client against the real stack: dev server, worker, sandbox bank and reservations on
// SQLite, the API on real ports. Each test counts what the bank and the reservation
// service recorded, not just what the client returned.
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultPayloadConverter } from '@temporalio/common';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  IdempotencyConflictError,
  OperationFailedError,
  OperationPendingError,
  type ClientOptions,
  type RetrySafe,
} from '../../client/lib/index.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { startApi } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { failedPayment, startGateway, startLossyProxy } from './helpers.js';

const SECRET = 'secret-client-0123456789';
const API_KEYS = `${SECRET}=acme`;

const stack = useFullStack({ name: 'client-lib', apiKeys: API_KEYS, stepDeadlineMs: 20_000 });

function client(opts: ClientOptions = {}): RetrySafe {
  return createClient({ baseUrl: stack.api.url, apiKey: SECRET, timeoutMs: 30_000, ...opts });
}

const newAccount = (balance: number) => stack.bank.newAccount(balance);

/** The bank's record of the charge made under this operation key: one row per key. */
async function chargeOf(key: string) {
  const res = await stack.bank.charge(`acme/${key}/charge`);
  return res.status === 200 ? res.body : undefined;
}

/** The attempt number of the last start of the workflow's charge activity. */
/** Attempts of the charge: its local first attempt (a marker) plus the regular retries. */
async function chargeAttempts(workflowId: string): Promise<number> {
  const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, string>();
  let local = 0;
  let regular = 0;
  for (const e of events) {
    const marker = e.markerRecordedEventAttributes;
    const summary = e.userMetadata?.summary ? defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary) : '';
    if (marker?.markerName === 'core_local_activity' && summary.startsWith('charge_payment ')) local++;
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), s.activityType?.name ?? '');
    const started = e.activityTaskStartedEventAttributes;
    if (started && scheduled.get(String(started.scheduledEventId)) === 'charge_payment')
      regular = Math.max(regular, started.attempt ?? 0);
  }
  return local + regular;
}

describe('payments.create', () => {
  it('returns the succeeded payment with the key it made, and the bank charges once', async () => {
    const account = await newAccount(10_000);
    const result = await client().payments.create({ account, amount: 1250, currency: 'EUR' });
    expect(result.status).toBe('succeeded');
    expect(result.meta.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.key).toBe(result.meta.key);
    expect(result.meta.replayed).toBe(false);
    expect(result.result?.chargeId).toMatch(/^ch_/);
    expect(await chargeOf(result.meta.key)).toMatchObject({
      chargeId: result.result?.chargeId,
      amount: 1250,
      status: 'captured',
    });
    expect(await stack.bank.balance(account)).toBe(8_750);
  });

  it("when the API's answer is lost (and the bank's too), retries with the same key and the bank charges once", async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('lost');
    const proxy = await startLossyProxy(Number(new URL(stack.api.url).port));
    // The bank commits and drops its first answer (the worker retries with the derived key);
    // the proxy lets the API answer and drops that answer (the client retries with its key).
    await stack.bank.setFaults({ dropResponseAfterCommit: 1 });
    proxy.loseNextAnswers(1);
    const retries: string[] = [];
    try {
      const result = await createClient({
        baseUrl: proxy.url,
        apiKey: SECRET,
        timeoutMs: 30_000,
        onRetry: (e) => retries.push(e.error.code),
      }).payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });

      expect(result.status).toBe('succeeded');
      expect(result.meta).toEqual({ key, replayed: true, requests: 2 });
      expect(retries).toEqual(['network_error']);
      const posts = proxy.requests.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts.map((r) => r.key)).toEqual([`"${key}"`, `"${key}"`]);
      expect(await chargeOf(key)).toMatchObject({ chargeId: result.result?.chargeId, amount: 1250, status: 'captured' });
      expect(await stack.bank.balance(account)).toBe(8_750);
      // The bank's first answer was lost too: the charge activity needed a second attempt.
      expect(await chargeAttempts(`acme/${key}`)).toBeGreaterThanOrEqual(2);
    } finally {
      await stack.bank.setFaults({ dropResponseAfterCommit: 0 });
      await proxy.close();
    }
  });

  it('a 422 for the same key with another amount is an IdempotencyConflictError naming amount; nothing more is charged', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('conflict');
    const rs = client();
    await rs.payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });
    const error = await rs.payments
      .create({ account, amount: 1300, currency: 'EUR' }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyConflictError);
    expect(error).toMatchObject({ status: 422, code: 'idempotency_key_reused', key, differences: ['amount'], attempts: 1 });
    expect(await chargeOf(key)).toMatchObject({ amount: 1250 });
    expect(await stack.bank.balance(account)).toBe(8_750);
  });

  it('a declined payment is an OperationFailedError with the business code; the balance is untouched', async () => {
    const account = await newAccount(100);
    const key = uniqueId('declined');
    const error = await client()
      .payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationFailedError);
    expect(error).toMatchObject({ code: 'insufficient_funds', key, operation: { status: 'failed', key } });
    expect(await stack.bank.balance(account)).toBe(100);
    expect((await chargeOf(key))?.status ?? 'none').not.toBe('captured');
  });

  it('a short deadline gives OperationPendingError with the key; wait(key) later returns the payment, charged once', async () => {
    const account = await newAccount(10_000);
    const key = `${uniqueId('slow')}/with-slash`;
    await stack.bank.setFaults({ delayMs: 1_500 });
    try {
      const rs = client();
      const pending = await rs.payments
        .create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key, timeoutMs: 700 })
        .catch((e: unknown) => e);
      expect(pending).toBeInstanceOf(OperationPendingError);
      expect(pending).toMatchObject({ key, operation: { key, status: 'processing' } });

      const done = await rs.operations.wait(key, { timeoutMs: 30_000 });
      expect(done.status).toBe('succeeded');
      expect(done.meta.key).toBe(key);
      expect(await chargeOf(key)).toMatchObject({ chargeId: done.result?.chargeId, amount: 1250, status: 'captured' });
      expect(await stack.bank.balance(account)).toBe(8_750);
      // Resuming again, or replaying the create, finds the same outcome and charges nothing.
      const again = await rs.payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });
      expect(again.meta.replayed).toBe(true);
      expect(again.result?.chargeId).toBe(done.result?.chargeId);
      expect(await stack.bank.balance(account)).toBe(8_750);
    } finally {
      await stack.bank.setFaults({ delayMs: 0 });
    }
  });
});

describe('when the API is down', () => {
  let port: number;
  beforeAll(async () => {
    port = await freePort();
  });

  it('retries the refused connection with the same key until the API is back, and charges once', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('down');
    const attempts: Array<string> = [];
    let restarted: Promise<Awaited<ReturnType<typeof startApi>>> | undefined;
    const rs = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: SECRET,
      timeoutMs: 30_000,
      random: () => 1,
      onRetry: (e) => {
        attempts.push(e.error.code);
        // The API comes back while the client is backing off.
        if (attempts.length === 2) restarted = startApi({ port, taskQueue: stack.taskQueue, apiKeys: API_KEYS });
      },
    });
    try {
      const result = await rs.payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });
      expect(attempts.slice(0, 2)).toEqual(['network_error', 'network_error']);
      expect(result.status).toBe('succeeded');
      expect(result.meta.key).toBe(key);
      expect(result.meta.requests).toBeGreaterThanOrEqual(3);
      expect(await chargeOf(key)).toMatchObject({ amount: 1250, status: 'captured' });
      expect(await stack.bank.balance(account)).toBe(8_750);
    } finally {
      await (await restarted)?.close();
    }
  });

  it('retries the 503 of a gateway in front of the stopped API until the API is back, with the same key', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('gw');
    const gateway = await startGateway(port);
    let restarted: Promise<Awaited<ReturnType<typeof startApi>>> | undefined;
    const rs = createClient({
      baseUrl: gateway.url,
      apiKey: SECRET,
      timeoutMs: 30_000,
      onRetry: (e) => {
        if (e.error.status === 503 && restarted === undefined)
          restarted = startApi({ port, taskQueue: stack.taskQueue, apiKeys: API_KEYS });
      },
    });
    try {
      const result = await rs.payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });
      expect(result.status).toBe('succeeded');
      const statuses = gateway.seen.map((s) => s.status);
      expect(statuses[0]).toBe(503);
      expect(statuses.at(-1)).toBe(200);
      expect(new Set(gateway.seen.map((s) => s.key))).toEqual(new Set([`"${key}"`]));
      expect(await chargeOf(key)).toMatchObject({ amount: 1250, status: 'captured' });
      expect(await stack.bank.balance(account)).toBe(8_750);
    } finally {
      await gateway.close();
      await (await restarted)?.close();
    }
  });
});

describe('checkouts.create', () => {
  it('a declined checkout is an OperationFailedError listing release_reservation, and the stock is back', async () => {
    const account = await newAccount(1_000);
    const sku = uniqueId('sku');
    await stack.reservations.setStock(sku, 10);
    const key = uniqueId('co');
    const error = await client()
      .checkouts.create({ account, amount: 4_200, currency: 'EUR', items: [{ sku, quantity: 2 }] }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationFailedError);
    expect(error).toMatchObject({ code: 'insufficient_funds', compensations: ['release_reservation'], key });
    expect(await stack.reservations.stock(sku)).toEqual({ available: 10, held: 0 });
    expect((await stack.reservations.reservation(`acme/${key}/reserve`)).body.status).toBe('released');
    expect(await stack.bank.balance(account)).toBe(1_000);
  });

  it('a checkout that goes through holds, charges and confirms once', async () => {
    const account = await newAccount(10_000);
    const sku = uniqueId('sku');
    await stack.reservations.setStock(sku, 10);
    const result = await client().checkouts.create({ account, amount: 4_200, currency: 'EUR', items: [{ sku, quantity: 2 }] });
    expect(result.status).toBe('succeeded');
    expect(Object.keys(result.result ?? {}).sort()).toEqual(['chargeId', 'reservationId']);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 8, held: 0 });
    expect(await stack.bank.balance(account)).toBe(5_800);
  });
});

describe('operations', () => {
  it('get returns a failed operation as it is, and an unknown key is an ApiError operation_not_found', async () => {
    const key = await failedPayment(client(), stack.bank, 'get');
    const op = await client().operations.get(key);
    expect(op).toMatchObject({ key, status: 'failed', error: { code: 'insufficient_funds' } });
    await expect(client().operations.get(uniqueId('nobody'))).rejects.toMatchObject({
      status: 404,
      code: 'operation_not_found',
      retryable: false,
    });
  });

  it("list returns the tenant's operations, filtered by type and status", async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('listed');
    await client().payments.create({ account, amount: 5, currency: 'EUR' }, { idempotencyKey: key });
    // Visibility is eventually consistent: the new operation appears within moments.
    let found = false;
    for (let i = 0; i < 40 && !found; i++) {
      const page = await client().operations.list({ type: 'payment', status: 'succeeded', limit: 100 });
      expect(page.operations.every((o) => o.type === 'payment' && o.status === 'succeeded')).toBe(true);
      found = page.operations.some((o) => o.key === key);
      if (!found) await sleep(250);
    }
    expect(found).toBe(true);
    const failedOnly = await client().operations.list({ status: 'failed', limit: 100 });
    expect(failedOnly.operations.some((o) => o.key === key)).toBe(false);
  });

  it('a missing API key is an ApiError unauthorized (401), not retried', async () => {
    const error = await createClient({ baseUrl: stack.api.url })
      .operations.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', attempts: 1 });
  });

  it('a body the API refuses is an ApiError invalid_request (400) naming the field; no key is consumed', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('bad');
    const bad = { account, amount: 12.5, currency: 'EUR' };
    const error = await client()
      .payments.create(bad, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request', key });
    expect((error as ApiError).problem?.errors?.map((e) => e.field)).toContain('amount');
    // The key was not consumed: a valid request under it now starts the payment.
    const ok = await client().payments.create({ ...bad, amount: 1250 }, { idempotencyKey: key });
    expect(ok.meta.replayed).toBe(false);
    expect(await stack.bank.balance(account)).toBe(8_750);
  });
});
