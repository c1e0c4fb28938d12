// POST /v1/operations/{key}/cancel through the real HTTP API, on the dev server, with the
// sandboxes' ledgers checked: every row of the contract's table, a cancel that lands between
// a checkout's charge and its confirm (the charge is reversed and the hold released), a
// cancel during a payment's only step and a checkout's slow reservation (the resource says
// which steps were undone and which only fenced, as the ledgers do), and cancels racing the
// last step: every cancel answered 202 ends cancelled, one answered 409 found it finished.
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { useFullStack } from '../support/full-stack.js';
import { auditOperation } from '../support/invariants.js';
import { sample, scrape } from '../support/metrics.js';
import { uniqueId } from '../support/stack.js';
import { pendingActivity } from '../workflows/wait-for.js';
import { acme, API_KEYS, umbrella } from './tenants.js';

const stack = useFullStack({ name: 'cancel-e2e', apiKeys: API_KEYS, stepDeadlineMs: 20_000 });

async function setUp(balance: number, stock: number) {
  const account = uniqueId('acc');
  const sku = uniqueId('sku');
  await stack.bank.openAccount(account, balance);
  await stack.reservations.setStock(sku, stock);
  return { account, sku, body: { account, amount: 4200, currency: 'EUR', items: [{ sku, quantity: 2 }] } };
}

const start = (key: string, body: unknown, type = 'checkouts', prefer = 'respond-async') =>
  stack.api.request('POST', `/v1/${type}`, { body, headers: { ...acme, 'idempotency-key': key, prefer } });
/**
 * Holds each operation's charge in flight where a cancel can land beside it. A step's first
 * attempt is a local activity, run inside a workflow task: a cancel is seen only once that
 * task completes. So the bank refuses every first attempt (from before the start), the charge is retried as a
 * regular activity (pending, visible), and from then on the bank answers, slowly.
 */
async function startWithChargeInFlight(keys: string[], startOne: (key: string) => Promise<unknown>): Promise<void> {
  await stack.bank.setFaults({ failBeforeCommit: 1 });
  for (const key of keys) await startOne(key);
  for (const key of keys) await pendingActivity(stack.temporal.workflow.getHandle(`acme/${key}`), 'charge_payment');
  await stack.bank.setFaults({ failBeforeCommit: 0, delayMs: 1_500 });
}

const cancel = (key: string, headers = acme) =>
  stack.api.request('POST', `/v1/operations/${encodeURIComponent(key)}/cancel`, { headers });

describe('POST /v1/operations/{key}/cancel', () => {
  it('between a checkout charge and its confirm: 202, the charge reversed, the hold released, the outcome cancelled', async () => {
    const { account, sku, body } = await setUp(10_000, 10);
    const key = uniqueId('order');
    try {
      await startWithChargeInFlight([key], async (k) => expect((await start(k, body)).status).toBe(202));
      const first = await cancel(key);
      expect(first.status).toBe(202);
      expect(first.headers.get('location')).toBe(`/v1/operations/${key}`);
      expect(first.headers.get('retry-after')).toBe('1');
      expect(first.body).toMatchObject({ key, status: 'processing', cancelRequested: true, keyExpiresAt: null });
      // A second cancel is harmless and says the same.
      const again = await cancel(key);
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ status: 'processing', cancelRequested: true });
      const read = await stack.api.request('GET', `/v1/operations/${key}`, { headers: acme });
      expect(read.body).toMatchObject({ status: 'processing', cancelRequested: true });
    } finally {
      await stack.bank.setFaults({ failBeforeCommit: 0, delayMs: 0 });
    }
    const final = await stack.api.waitTerminal(key, acme.authorization);
    expect(final).toMatchObject({
      status: 'failed',
      cancelRequested: true,
      error: { code: 'cancelled', compensations: ['reverse_charge', 'release_reservation'] },
      steps: [
        { name: 'reserve_items', status: 'compensated' },
        { name: 'charge_payment', status: 'compensated' },
        { name: 'confirm_reservation', status: 'pending' },
      ],
    });
    expect(String((final.error as { message: string }).message)).toContain(
      'cancelled after charge_payment, before any outcome of confirm_reservation was recorded (cancel requested by tenant acme through the API at ',
    );
    // Money and stock: as if it never happened, and the ledgers say why.
    expect(await stack.bank.balance(account)).toBe(10_000);
    expect((await stack.bank.charge(`acme/${key}/charge`)).body.status).toBe('reversed');
    expect((await stack.reservations.reservation(`acme/${key}/reserve`)).body.status).toBe('released');
    expect(await stack.reservations.stock(sku)).toEqual({ available: 10, held: 0 });

    // The workflow returned that outcome: the execution completed, it was not "Canceled".
    const handle = stack.temporal.workflow.getHandle(`acme/${key}`);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    // The Web UI's current details say who asked, and when.
    const { currentDetails } = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(currentDetails).toMatch(
      /\*\*cancel requested\*\* by tenant acme through the API at \d{4}-\d\d-\d\dT[\d:.]+Z · noticed /,
    );

    // A POST retry of its key gets that outcome, marked as a replay.
    const retry = await start(key, body, 'checkouts', 'wait=5');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ status: 'failed', error: { code: 'cancelled' }, cancelRequested: true });

    // Once finished, a cancel changes nothing: 409.
    const late = await cancel(key);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'operation_already_completed', status: 409 });
    expect(late.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('of a finished payment: 409 operation_already_completed, and the payment stands', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 10_000);
    const key = uniqueId('pay');
    const done = await start(key, { account, amount: 1_250, currency: 'EUR' }, 'payments', 'wait=30');
    expect(done.body.status).toBe('succeeded');
    const res = await cancel(key);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'operation_already_completed' });
    const read = await stack.api.request('GET', `/v1/operations/${key}`, { headers: acme });
    expect(read.body).toMatchObject({ status: 'succeeded', cancelRequested: false, result: done.body.result });
    expect(await stack.bank.balance(account)).toBe(8_750);
  });

  it("of an unknown key, or of another tenant's: 404 operation_not_found, and the operation runs on", async () => {
    expect((await cancel(uniqueId('nobody'))).body).toMatchObject({ status: 404, code: 'operation_not_found' });
    const { account, body } = await setUp(10_000, 10);
    const key = uniqueId('order');
    await stack.bank.setFaults({ delayMs: 1_000 });
    try {
      await start(key, body);
      const foreign = await cancel(key, umbrella);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('operation_not_found');
    } finally {
      await stack.bank.setFaults({ failBeforeCommit: 0, delayMs: 0 });
    }
    expect(await stack.api.waitTerminal(key, acme.authorization)).toMatchObject({ status: 'succeeded', cancelRequested: false });
    expect(await stack.bank.balance(account)).toBe(10_000 - 4_200);
  });

  it('needs an API key', async () => {
    const res = await stack.api.request('POST', `/v1/operations/${uniqueId('k')}/cancel`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('of a key holding "/", written plain or encoded', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 10_000);
    const plain = `${uniqueId('tenant-side')}/order/1`;
    const encoded = `${uniqueId('tenant-side')}/order/2`;
    try {
      await startWithChargeInFlight([plain, encoded], (k) => start(k, { account, amount: 100, currency: 'EUR' }, 'payments'));
      const viaWildcard = await stack.api.request('POST', `/v1/operations/${plain}/cancel`, { headers: acme });
      expect(viaWildcard.status).toBe(202);
      expect(viaWildcard.body).toMatchObject({ key: plain, cancelRequested: true });
      const viaParam = await cancel(encoded);
      expect(viaParam.status).toBe(202);
      expect(viaParam.body).toMatchObject({ key: encoded, cancelRequested: true });
    } finally {
      await stack.bank.setFaults({ failBeforeCommit: 0, delayMs: 0 });
    }
    // A payment's only step was in flight: it finishes, and the end of it is a boundary too.
    for (const key of [plain, encoded]) {
      const final = await stack.api.waitTerminal(key, acme.authorization);
      expect(final).toMatchObject({
        status: 'failed',
        cancelRequested: true,
        error: { code: 'cancelled', compensations: ['reverse_charge'] },
        steps: [{ name: 'charge_payment', status: 'compensated' }],
      });
      expect((await stack.bank.charge(`acme/${key}/charge`)).body.status).toBe('reversed');
      expect(
        await auditOperation({ workflowId: `acme/${key}`, type: 'payment', amount: 100, operation: final }, stack.bank),
      ).toEqual([]);
    }
    // Not a cancel: any other POST below /v1/operations/ is 405.
    const other = await stack.api.request('POST', `/v1/operations/${plain}`, { headers: acme });
    expect(other.status).toBe(405);
    expect(other.headers.get('allow')).toBe('GET, HEAD');
  });

  it('during a checkout whose reservation is slow: cancelled, nothing moved, and each step says what was undone', async () => {
    const { account, sku, body } = await setUp(10_000, 10);
    const key = uniqueId('slow-hold');
    // The hold answers after 1.5 s; the cancel arrives 0.3 s in, while the first attempt runs
    // inside a workflow task. Temporal refuses that task's completion, the run starts again
    // from history with the cancel first, and the steps the lost task made are fenced.
    await stack.reservations.setFaults({ delayMs: 1_500 });
    try {
      expect((await start(key, body)).status).toBe(202);
      await sleep(300);
      expect((await cancel(key)).status).toBe(202);
    } finally {
      await stack.reservations.setFaults({ delayMs: 0 });
    }
    const final = await stack.api.waitTerminal(key, acme.authorization);
    expect(final).toMatchObject({ status: 'failed', cancelRequested: true, error: { code: 'cancelled' } });
    expect(await stack.bank.balance(account)).toBe(10_000);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 10, held: 0 });
    // What the resource says of each step is what its downstream's ledger says under its key.
    const steps = final.steps as Array<{ name: string; status: string; downstreamKey: string }>;
    const hold = (await stack.reservations.reservation(`acme/${key}/reserve`)).body.status;
    const charge = (await stack.bank.charge(`acme/${key}/charge`)).body.status;
    const expected = (ledger: unknown) => (ledger === 'fenced' ? 'fenced' : 'compensated');
    expect(steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      `reserve_items:${expected(hold)}`,
      `charge_payment:${expected(charge)}`,
      'confirm_reservation:pending',
    ]);
    const message = String((final.error as { message: string }).message);
    for (const [step, compensation, ledger] of [
      ['reserve_items', 'release_reservation', hold],
      ['charge_payment', 'reverse_charge', charge],
    ] as const) {
      expect(message).toContain(
        ledger === 'fenced' ? `${compensation} fenced ${step}, which had not taken effect` : `${compensation} undid ${step}`,
      );
    }
    expect(
      await auditOperation(
        { workflowId: `acme/${key}`, type: 'checkout', amount: 4200, operation: final },
        stack.bank,
        stack.reservations,
      ),
    ).toEqual([]);
  });

  it('racing the last step: a cancel answered 202 always ends cancelled, one answered 409 found the checkout done', async () => {
    const { account, sku } = await setUp(1_000_000, 1_000);
    // The confirm is slow, so cancels arrive before, during and after it.
    await stack.reservations.setFaults({ delayMs: 300 });
    const keys: string[] = [];
    const answered = new Map<string, number>();
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const key = uniqueId(`race-${i}`);
          keys.push(key);
          await start(key, { account, amount: 500, currency: 'EUR', items: [{ sku, quantity: 1 }] });
          await sleep(250 * i);
          const res = await cancel(key);
          expect([202, 409]).toContain(res.status);
          answered.set(key, res.status);
        }),
      );
    } finally {
      await stack.reservations.setFaults({ delayMs: 0 });
    }
    let succeeded = 0;
    for (const key of keys) {
      const final = await stack.api.waitTerminal(key, acme.authorization);
      if (answered.get(key) === 202) {
        expect(final).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
      } else {
        expect(final.status).toBe('succeeded');
        succeeded++;
      }
      const audit = await auditOperation(
        { workflowId: `acme/${key}`, type: 'checkout', amount: 500, operation: final },
        stack.bank,
        stack.reservations,
      );
      expect(audit).toEqual([]);
    }
    expect(await stack.bank.balance(account)).toBe(1_000_000 - 500 * succeeded);
    expect(await stack.reservations.stock(sku)).toEqual({ available: 1_000 - succeeded, held: 0 });
  });

  it('counts each cancel by result, with bounded labels', async () => {
    // A scrape from this machine: the metrics are the operators', and refuse a tenant's key.
    const text = await scrape(`${stack.api.url}/metrics`);
    expect(sample(text, 'retrysafe_cancellations_total', { result: 'requested' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'retrysafe_cancellations_total', { result: 'repeated' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'retrysafe_cancellations_total', { result: 'already_completed' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'retrysafe_cancellations_total', { result: 'not_found' })).toBeGreaterThanOrEqual(2);
  });
});

describe('every finished answer says when its key is forgotten', () => {
  it('keyExpiresAt is completedAt plus the namespace retention (24 h on the test server), null while processing', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 10_000);
    const key = uniqueId('pay');
    await stack.bank.setFaults({ delayMs: 500 });
    let first;
    try {
      first = await start(key, { account, amount: 100, currency: 'EUR' }, 'payments');
    } finally {
      await stack.bank.setFaults({ failBeforeCommit: 0, delayMs: 0 });
    }
    expect(first.body).toMatchObject({ status: 'processing', completedAt: null, keyExpiresAt: null });
    const final = await stack.api.waitTerminal(key, acme.authorization);
    const completedAt = Date.parse(String(final.completedAt));
    expect(Date.parse(String(final.keyExpiresAt))).toBe(completedAt + 24 * 3_600_000);
    // The same through a replay (the cached answer) and the list.
    const replay = await start(key, { account, amount: 100, currency: 'EUR' }, 'payments', 'wait=5');
    expect(replay.body.keyExpiresAt).toBe(final.keyExpiresAt);
  });
});
