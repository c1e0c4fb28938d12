// Determinism guard: every stored history must replay against today's workflow code.
// A change that alters the commands a workflow issues (new activity, reordered step,
// extra timer) fails here before it can break operations already in flight. Each set is
// what the workflow code of its day wrote, and operations of every day may still be open
// when a worker is upgraded, so all must keep replaying: v1-* from before steps ran a local
// first attempt, the unprefixed ones from before a fenced step fenced the later ones,
// cancels and completion webhooks, v3-* from the code with all three, v4-* from operations
// run as definitions by one generic workflow, transfers among them (record.test.ts), and
// one a chaos run caught: a payment refused in its first workflow task, cancelled while its
// notification workflow was starting (the cancel now turns its outcome into `cancelled`),
// and v5-* from operations that carry their program, each declared call an activity named
// after its step. Those last are also what shows the engine itself holds a run to its
// program: a history whose recorded program is edited no longer replays.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { ProgramStep } from '../../workflows/program.js';

type Step = ProgramStep;
import { inject } from 'vitest';

const dir = new URL('./', import.meta.url);
const histories = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('stored workflow histories', () => {
  it('covers payment, checkout and transfer: success, business failure, fenced runs, cancels and a webhook', () => {
    expect(histories.sort()).toEqual([
      'checkout-charge-fenced.json',
      'checkout-insufficient-funds.json',
      'checkout-succeeded.json',
      'payment-fenced.json',
      'payment-insufficient-funds.json',
      'payment-succeeded.json',
      'v1-checkout-charge-fenced.json',
      'v1-checkout-insufficient-funds.json',
      'v1-checkout-succeeded.json',
      'v1-payment-fenced.json',
      'v1-payment-insufficient-funds.json',
      'v1-payment-succeeded.json',
      'v3-checkout-cancelled.json',
      'v3-checkout-charge-fenced.json',
      'v3-checkout-insufficient-funds.json',
      'v3-checkout-out-of-stock.json',
      'v3-checkout-succeeded.json',
      'v3-payment-cancelled-during-charge.json',
      'v3-payment-fenced.json',
      'v3-payment-insufficient-funds.json',
      'v3-payment-succeeded.json',
      'v3-payment-webhook.json',
      'v4-checkout-cancelled.json',
      'v4-checkout-charge-fenced.json',
      'v4-checkout-insufficient-funds.json',
      'v4-checkout-out-of-stock.json',
      'v4-checkout-succeeded.json',
      'v4-payment-cancelled-during-charge.json',
      'v4-payment-fenced.json',
      'v4-payment-insufficient-funds.json',
      'v4-payment-refused-cancelled-while-notification-starts.json',
      'v4-payment-succeeded.json',
      'v4-payment-webhook.json',
      'v4-transfer-destination-not-found.json',
      'v4-transfer-succeeded.json',
      'v5-checkout-cancelled.json',
      'v5-checkout-charge-fenced.json',
      'v5-checkout-insufficient-funds.json',
      'v5-checkout-out-of-stock.json',
      'v5-checkout-succeeded.json',
      'v5-payment-cancelled-during-charge.json',
      'v5-payment-fenced.json',
      'v5-payment-insufficient-funds.json',
      'v5-payment-succeeded.json',
      'v5-payment-webhook.json',
      'v5-transfer-destination-not-found.json',
      'v5-transfer-succeeded.json',
    ]);
  });

  it.each([
    [
      'a step inserted before the first',
      (steps: Step[]) => [{ ...steps[0]!, name: 'take_deposit', keySuffix: 'deposit' }, ...steps],
    ],
    ['a step renamed', (steps: Step[]) => [{ ...steps[0]!, name: 'hold_items' }, ...steps.slice(1)]],
    ['a step removed', (steps: Step[]) => steps.slice(1)],
  ])("refuses, by Temporal's own replay check, a checkout whose recorded program got %s", async (_change, edit) => {
    const history = JSON.parse(readFileSync(new URL('v5-checkout-succeeded.json', dir), 'utf8'));
    const payload = history.events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
    const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
    input.program.steps = edit(input.program.steps);
    payload.data = Buffer.from(JSON.stringify(input)).toString('base64');
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, 'edited'),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });

  it.each(histories)('replays %s without a non-determinism error', async (file) => {
    const history = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, file),
    ).resolves.toBeUndefined();
  });
});
