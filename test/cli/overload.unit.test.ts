// `retrysafe pay` when the API sheds load: 429 rate_limited and 503 engine_busy are retried
// with the same key, no sooner than Retry-After; past the deadline the CLI says that
// repeating the command with the same key is safe. A scripted API on loopback plays the API.
import { describe, expect, it } from 'vitest';
import { operation, problem, useScriptedApi } from '../client/scripted-api.js';
import { alicePays, runHere } from './in-process.js';

const api = useScriptedApi();

const pay = (...more: string[]) => runHere([...alicePays('order-9'), '--api-url', api.url, ...more]);

describe('retrysafe pay under load', () => {
  it('retries a 429 and a 503 engine_busy with the same key after Retry-After, then prints the payment; exit 0', async () => {
    api.script = [
      { ...problem(429, 'rate_limited'), headers: { 'retry-after': '1', ratelimit: '"tenant";r=0;t=1' } },
      { ...problem(503, 'engine_busy'), headers: { 'retry-after': '1' } },
      { status: 200, body: operation('order-9', 'succeeded') },
    ];
    const started = Date.now();
    const run = await pay();
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/│ status\s+│ succeeded\s+│/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(api.seen.map((s) => `${s.method} ${s.url} ${String(s.headers['idempotency-key'])}`)).toEqual([
      'POST /v1/payments "order-9"',
      'POST /v1/payments "order-9"',
      'POST /v1/payments "order-9"',
    ]);
  });

  it('gives up at the deadline when Retry-After lies beyond it: exit 4, with the command that repeats it safely', async () => {
    api.script = [{ ...problem(429, 'rate_limited'), headers: { 'retry-after': '30' } }];
    const run = await pay('--timeout', '2s');
    expect(run.exitCode).toBe(4);
    expect(api.seen).toHaveLength(1);
    expect(run.stderr).toMatch(/error: 429 rate_limited: rate_limited detail \(gave up at the deadline, after 1 attempts/);
    expect(run.stderr).toContain(
      'the API is busy; repeating it later with the same key is safe: retrysafe pay --account acc_alice --amount 1250 --currency EUR --key order-9',
    );
  });
});
