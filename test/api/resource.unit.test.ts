import { TypedSearchAttributes } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { operationFromOutcome, toOperation, type ExecutionView } from '../../common/resource.js';
import { SearchAttributes } from '../../workflows/contracts.js';

const ctx = { temporalUiUrl: 'http://localhost:8233', namespace: 'default' };
const startTime = new Date('2026-01-02T03:04:05.000Z');
const closeTime = new Date('2026-01-02T03:04:07.500Z');
const steps = [{ name: 'charge_payment', status: 'completed', downstreamKey: 'acme/order/42/charge' }];
const memo = {
  type: 'payment',
  tenant: 'acme',
  key: 'order/42',
  fingerprint: 'f'.repeat(64),
  request: { account: 'acc_alice', amount: 1250, currency: 'EUR' },
  step: 'charge_payment',
  steps: [{ name: 'charge_payment', status: 'running', downstreamKey: 'acme/order/42/charge' }],
};

const view = (over: Partial<ExecutionView>): ExecutionView => ({
  workflowId: 'acme/order/42',
  status: { name: 'RUNNING' },
  startTime,
  memo,
  ...over,
});

describe('operation resource', () => {
  it('maps a running execution to processing, from the memo', () => {
    expect(toOperation(view({}), undefined, ctx)).toEqual({
      key: 'order/42',
      type: 'payment',
      status: 'processing',
      step: 'charge_payment',
      createdAt: '2026-01-02T03:04:05.000Z',
      completedAt: null,
      keyExpiresAt: null,
      steps: memo.steps,
      needsAttention: false,
      cancelRequested: false,
      links: {
        self: '/v1/operations/order%2F42',
        temporalUi: 'http://localhost:8233/namespaces/default/workflows/acme%2Forder%2F42',
      },
    });
  });

  it('before any step: step null and no steps', () => {
    const op = toOperation(view({ memo: { ...memo, step: undefined, steps: undefined } }), undefined, ctx);
    expect(op.step).toBeNull();
    expect(op.steps).toEqual([]);
  });

  it('maps a succeeded outcome with its result and final steps', () => {
    const op = toOperation(
      view({ status: { name: 'COMPLETED' }, closeTime }),
      { status: 'succeeded', result: { chargeId: 'ch_1' }, steps },
      ctx,
    );
    expect(op).toMatchObject({
      status: 'succeeded',
      result: { chargeId: 'ch_1' },
      steps,
      completedAt: '2026-01-02T03:04:07.500Z',
    });
    expect(op).not.toHaveProperty('error');
  });

  it('maps a business failure with its code and compensations', () => {
    const error = { code: 'out_of_stock', message: 'sku_rare', compensations: ['release_reservation'] };
    const op = toOperation(view({ status: { name: 'COMPLETED' }, closeTime }), { status: 'failed', error, steps }, ctx);
    expect(op).toMatchObject({ status: 'failed', error });
    expect(op).not.toHaveProperty('result');
  });

  it.each(['TERMINATED', 'TIMED_OUT', 'FAILED', 'CANCELLED'] as const)(
    'reports an execution that closed %s as failed with operation_aborted',
    (name) => {
      const op = toOperation(view({ status: { name }, closeTime }), undefined, ctx);
      expect(op.status).toBe('failed');
      expect(op.error?.code).toBe('operation_aborted');
      expect(op.error?.message).toContain(name);
    },
  );

  it('reports a completed execution without a valid outcome as aborted', () => {
    const op = toOperation(view({ status: { name: 'COMPLETED' }, closeTime }), { hello: 'world' }, ctx);
    expect(op.error?.code).toBe('operation_aborted');
  });

  it('without the return value (a list row), takes a closed status from the search attribute', () => {
    const typedSearchAttributes = new TypedSearchAttributes([
      { key: SearchAttributes.OperationStatus, value: 'succeeded' },
      { key: SearchAttributes.NeedsAttention, value: true },
    ]);
    const op = toOperation(
      view({ status: { name: 'COMPLETED' }, closeTime, typedSearchAttributes, memo: { ...memo, needsAttention: undefined } }),
      undefined,
      ctx,
    );
    expect(op).toMatchObject({ status: 'succeeded', needsAttention: true });
  });

  describe('from the return value and close time alone', () => {
    const facts = {
      type: 'payment',
      key: 'order/42',
      createdAt: startTime.toISOString(),
      step: 'charge_payment',
      needsAttention: false,
    };
    const finalMemo = { ...memo, steps };

    it('is the resource a read of the execution gives, succeeded or failed', () => {
      const error = { code: 'insufficient_funds', message: 'declined', compensations: [] };
      for (const outcome of [
        { status: 'succeeded', result: { chargeId: 'ch_1' }, steps, ...facts },
        { status: 'failed', error, steps, ...facts },
        { status: 'failed', error, steps, ...facts, needsAttention: true },
      ]) {
        const read = toOperation(
          view({ status: { name: 'COMPLETED' }, closeTime, memo: { ...finalMemo, needsAttention: outcome.needsAttention } }),
          outcome,
          ctx,
        );
        expect(operationFromOutcome('acme/order/42', outcome, closeTime, ctx)).toEqual(read);
      }
    });

    it('takes the last step and the attention flag from the outcome over a memo that lags', () => {
      const outcome = { status: 'succeeded', result: { chargeId: 'ch_1' }, steps, ...facts, needsAttention: true };
      const op = toOperation(
        view({ status: { name: 'COMPLETED' }, closeTime, memo: { ...memo, step: undefined } }),
        outcome,
        ctx,
      );
      expect(op).toMatchObject({ step: 'charge_payment', needsAttention: true });
    });

    it('is not built from an outcome without its facts (a workflow from before they were returned)', () => {
      const { createdAt: _, ...withoutStart } = facts;
      expect(operationFromOutcome('acme/order/42', { status: 'succeeded', result: {}, steps }, closeTime, ctx)).toBeUndefined();
      expect(
        operationFromOutcome('acme/order/42', { status: 'succeeded', result: {}, steps, ...withoutStart }, closeTime, ctx),
      ).toBeUndefined();
      expect(operationFromOutcome('acme/order/42', { hello: 'world', ...facts }, closeTime, ctx)).toBeUndefined();
    });
  });

  it('says when the key will be forgotten: completedAt plus the namespace retention, null while processing', () => {
    const retentionMs = 7 * 86_400_000;
    const finished = toOperation(
      view({ status: { name: 'COMPLETED' }, closeTime }),
      { status: 'succeeded', result: { chargeId: 'ch_1' }, steps },
      { ...ctx, retentionMs },
    );
    expect(finished.keyExpiresAt).toBe('2026-01-09T03:04:07.500Z');
    expect(toOperation(view({}), undefined, { ...ctx, retentionMs }).keyExpiresAt).toBeNull();
  });

  it('says a cancel was requested: from the description while running, from the outcome once it ended', () => {
    const raw = { workflowExtendedInfo: { cancelRequested: true } };
    expect(toOperation(view({ raw }), undefined, ctx).cancelRequested).toBe(true);
    expect(toOperation(view({ raw: { workflowExtendedInfo: { cancelRequested: false } } }), undefined, ctx).cancelRequested).toBe(
      false,
    );
    const error = { code: 'cancelled', message: 'cancelled before charge_payment', compensations: [] };
    const cancelled = toOperation(
      view({ status: { name: 'COMPLETED' }, closeTime }),
      { status: 'failed', error, steps, cancelRequested: true },
      ctx,
    );
    expect(cancelled).toMatchObject({ status: 'failed', error, cancelRequested: true });
  });

  it('shows a pending notification only for an operation started with a webhook', () => {
    expect(toOperation(view({ memo: { ...memo, notify: true } }), undefined, ctx).notification).toEqual({
      status: 'pending',
      attempts: 0,
    });
    expect(toOperation(view({}), undefined, ctx)).not.toHaveProperty('notification');
  });

  it('falls back to the workflow ID for the key when the memo has none', () => {
    const op = toOperation(view({ memo: {} }), undefined, ctx);
    expect(op.key).toBe('order/42');
  });
});
