// Counters move by exactly one for one event: a replay and a 422 at the API's /metrics,
// a fence, a compensation and downstream outcomes at the worker's runtime endpoint.
import { expect, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { scrape, sample } from '../support/metrics.js';
import { uniqueId } from '../support/stack.js';

// The worker runs as a process: its runtime serves the metrics endpoint under test.
const stack = useFullStack({
  name: 'metrics',
  worker: 'process',
  workerMetrics: true,
  workerEnv: { DOWNSTREAM_TIMEOUT: '1s' },
  stepDeadlineMs: 2_000,
});
const workerMetrics = () => stack.workerMetricsUrl!;

const apiMetrics = () => scrape(`${stack.api.url}/metrics`);

it('counts one replay, one fingerprint conflict and one fence, each exactly once', async () => {
  const account = uniqueId('acc');
  await stack.bank.openAccount(account, 10_000);
  const key = uniqueId('pay');
  const post = (amount: number, k = key, prefer = 'wait=20') =>
    stack.api.request('POST', '/v1/payments', {
      headers: { 'idempotency-key': k, prefer },
      body: { account, amount, currency: 'EUR' },
    });
  expect((await post(100)).status).toBe(200);

  let before = await apiMetrics();
  expect((await post(100)).headers.get('idempotent-replayed')).toBe('true');
  let after = await apiMetrics();
  expect(
    sample(after, 'retrysafe_replays_total', { type: 'payment' }) -
      sample(before, 'retrysafe_replays_total', { type: 'payment' }),
  ).toBe(1);
  expect(sample(after, 'retrysafe_operations_started_total') - sample(before, 'retrysafe_operations_started_total')).toBe(0);

  before = after;
  expect((await post(999)).status).toBe(422);
  after = await apiMetrics();
  expect(sample(after, 'retrysafe_fingerprint_conflicts_total') - sample(before, 'retrysafe_fingerprint_conflicts_total')).toBe(
    1,
  );
  expect(sample(after, 'retrysafe_replays_total') - sample(before, 'retrysafe_replays_total')).toBe(0);

  // A fenced payment: the bank is down past the 2 s deadline, then back for the reversal.
  const workerBefore = await scrape(workerMetrics());
  await stack.bank.setFaults({ down: true });
  const fencedKey = uniqueId('fenced');
  expect((await post(300, fencedKey, 'respond-async')).status).toBe(202);
  await new Promise((r) => setTimeout(r, 2_600));
  await stack.bank.setFaults({ down: false });
  expect(await stack.api.waitTerminal(fencedKey)).toMatchObject({ error: { code: 'payment_unavailable' } });
  // The runtime exports on its own schedule: poll until the fence shows.
  let workerAfter = await scrape(workerMetrics());
  for (
    let i = 0;
    i < 40 &&
    sample(workerAfter, 'retrysafe_fences', { step: 'charge_payment' }) ===
      sample(workerBefore, 'retrysafe_fences', { step: 'charge_payment' });
    i++
  ) {
    await new Promise((r) => setTimeout(r, 250));
    workerAfter = await scrape(workerMetrics());
  }
  const delta = (name: string, labels: Record<string, string> = {}) =>
    sample(workerAfter, name, labels) - sample(workerBefore, name, labels);
  expect(delta('retrysafe_fences', { step: 'charge_payment' })).toBe(1);
  expect(delta('retrysafe_compensations', { compensation: 'reverse_charge' })).toBe(1);
  expect(delta('retrysafe_operations_completed', { type: 'payment', status: 'failed', code: 'payment_unavailable' })).toBe(1);
  expect(delta('retrysafe_downstream_calls', { service: 'bank', result: 'unavailable' })).toBeGreaterThanOrEqual(1);
  expect(delta('retrysafe_downstream_calls', { service: 'bank', result: 'ok' })).toBe(1); // the reversal
  // No idempotency key ever appears in a label.
  expect(workerAfter).not.toContain(fencedKey);
  expect(await apiMetrics()).not.toContain(fencedKey);
});
