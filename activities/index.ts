// Activities are built by a factory so the worker wires real downstream clients and a
// test can wire its own. They hold no URLs and read no environment. Each is handed the
// key it sends downstream and the operation it belongs to (a DownstreamTarget): nothing
// here recovers them from the workflow ID. The completion webhook's two activities come
// from webhooks.ts; a worker without webhooks configured still registers them (they then
// fail retryably, so a configured worker can take over before the deadline).
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { CompensationName, DownstreamTarget, StepName } from '../workflows/contracts.js';
import type { BankClient, ChargeRequest, Reversal } from './bank.js';
import { BusinessError, ChargeFencedError, DownstreamConflictError, ReservationFencedError } from './errors.js';
import { requestIdOf } from './http.js';
import type { HoldRequest, ReservationState, ReservationsClient } from './reservations.js';
import { createWebhookActivities, type WebhookDeps } from './webhooks.js';

export interface ActivityDeps {
  bank: BankClient;
  reservations: ReservationsClient;
  /** Completion webhooks: the tenants' URLs and the signing secret; absent when none is configured. */
  webhooks?: WebhookDeps;
}

type Service = 'bank' | 'reservations';
type Result = 'ok' | 'replayed' | 'business_error' | 'fenced' | 'conflict' | 'unavailable';

function resultOf(err: unknown): Result {
  if (err instanceof BusinessError) return 'business_error';
  if (err instanceof ChargeFencedError || err instanceof ReservationFencedError) return 'fenced';
  if (err instanceof DownstreamConflictError) return 'conflict';
  return 'unavailable';
}

/**
 * One downstream call of a step or compensation: counted by service and result (bounded
 * labels, no keys) and logged with the tenant, key, workflow and step it belongs to.
 */
async function track<T>(
  service: Service,
  step: StepName | CompensationName,
  target: DownstreamTarget,
  call: (downstreamKey: string) => Promise<T>,
): Promise<T> {
  if (typeof target?.downstreamKey !== 'string' || target.downstreamKey === '' || !target.operation) {
    // Never call a downstream without the key it deduplicates on (an input from an older
    // workflow version, or a bug): failing for good hands the decision back to the saga,
    // which fences a forward step and re-runs a compensation with a well-formed input.
    throw ApplicationFailure.nonRetryable(`${step}: input without a downstream key`, 'InvalidActivityInput');
  }
  const ctx = Context.current();
  const { tenant, key, workflowId } = target.operation;
  const meta = { tenant, key, workflowId, step, downstreamKey: target.downstreamKey, requestId: requestIdOf(ctx.info) };
  const calls = ctx.metricMeter.createCounter('retrysafe_downstream_calls', 'calls', 'Downstream calls by service and result');
  try {
    const answer = await call(target.downstreamKey);
    const replayed = (answer as { replayed?: boolean }).replayed === true;
    calls.add(1, { service, result: replayed ? 'replayed' : 'ok' });
    log.info(`${step} answered`, { ...meta, replayed });
    return answer;
  } catch (err) {
    const result = resultOf(err);
    calls.add(1, { service, result });
    log.warn(`${step} refused or failed`, { ...meta, result, error: (err as Error).message });
    throw err;
  }
}

export function createActivities({ bank, reservations, webhooks }: ActivityDeps) {
  return {
    ...createWebhookActivities(webhooks),

    async chargePayment(target: DownstreamTarget, charge: ChargeRequest): Promise<{ chargeId: string }> {
      const { chargeId } = await track('bank', 'charge_payment', target, (key) => bank.charge(key, charge));
      return { chargeId };
    },

    async reverseCharge(target: DownstreamTarget): Promise<Reversal> {
      return track('bank', 'reverse_charge', target, (key) => bank.reverse(key));
    },

    async reserveItems(target: DownstreamTarget, hold: HoldRequest): Promise<{ reservationId: string }> {
      const { reservationId } = await track('reservations', 'reserve_items', target, (key) => reservations.hold(key, hold));
      return { reservationId };
    },

    async confirmReservation(target: DownstreamTarget): Promise<ReservationState> {
      return track('reservations', 'confirm_reservation', target, (key) => reservations.confirm(key));
    },

    async releaseReservation(target: DownstreamTarget): Promise<ReservationState> {
      return track('reservations', 'release_reservation', target, (key) => reservations.release(key));
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
