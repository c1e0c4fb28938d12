// Activities are built by a factory so the worker wires real downstream clients and a
// test can wire its own. They hold no URLs and read no environment. Each is handed the
// key it sends downstream and the operation it belongs to (a DownstreamTarget): nothing
// here recovers them from the workflow ID. The hand-written ones speak to the bank and the
// reservation service (their names and inputs are in recorded histories); callService
// makes any declared HTTP call of a definition. The completion webhook's two activities
// come from webhooks.ts; a worker without webhooks configured still registers them (they
// then fail retryably, so a configured worker can take over before the deadline).
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { LogEvent } from '../common/log-events.js';
import type { DownstreamTarget } from '../workflows/contracts.js';
import type { BankClient, ChargeRequest, Reversal } from './bank.js';
import { DOWNSTREAM_REFUSAL } from './errors.js';
import { requestIdOf } from './http.js';
import type { HoldRequest, ReservationState, ReservationsClient } from './reservations.js';
import { callService, type ServiceAnswer, type ServiceCall, type ServiceCallOptions } from './service.js';
import { traceCall, traceDeliveries } from './tracing.js';
import { createWebhookActivities, type WebhookDeps } from './webhooks.js';

/** The downstream clients the activities use, for tools that make the same calls. */
export { createBankClient } from './bank.js';
export { createReservationsClient } from './reservations.js';

export interface ActivityDeps {
  bank: BankClient;
  reservations: ReservationsClient;
  /** Base URLs of the services declared calls name (the bank's and the reservation service's among them). */
  services: ServiceCallOptions;
  /** Completion webhooks: the tenants' URLs and the signing secret; absent when none is configured. */
  webhooks?: WebhookDeps;
}

type Result = 'ok' | 'replayed' | 'refused' | 'unavailable';

function resultOf(err: unknown): Result {
  return err instanceof ApplicationFailure && err.type === DOWNSTREAM_REFUSAL ? 'refused' : 'unavailable';
}

/**
 * One downstream call of a step or compensation: counted by service and result (bounded
 * labels, no keys) and logged with the tenant, key, workflow and activity it belongs to.
 */
async function track<T>(
  service: string,
  call: string,
  target: DownstreamTarget,
  make: (downstreamKey: string) => Promise<T>,
  undo = false,
): Promise<T> {
  if (typeof target?.downstreamKey !== 'string' || target.downstreamKey === '' || !target.operation) {
    // Never call a downstream without the key it deduplicates on (an input from an older
    // workflow version, or a bug): failing for good hands the decision back to the saga,
    // which fences a forward step and re-runs a compensation with a well-formed input.
    throw ApplicationFailure.nonRetryable(`${call}: input without a downstream key`, 'InvalidActivityInput');
  }
  const ctx = Context.current();
  const { tenant, key, workflowId } = target.operation;
  const step = target.step ?? call;
  const meta = { tenant, key, workflowId, step, call, downstreamKey: target.downstreamKey, requestId: requestIdOf(ctx.info) };
  const calls = ctx.metricMeter.createCounter('retrysafe_downstream_calls', 'calls', 'Downstream calls by service and result');
  // In the call's span of the operation's trace (when it carries one): the lines below belong to it.
  return traceCall({ service, call, target, undo }, async () => {
    try {
      const answer = await make(target.downstreamKey);
      const replayed = (answer as { replayed?: boolean }).replayed === true;
      calls.add(1, { service, result: replayed ? 'replayed' : 'ok' });
      log.info(`${step} answered`, { ...meta, replayed });
      return answer;
    } catch (err) {
      const result = resultOf(err);
      calls.add(1, { service, result });
      log.warn(`${step} refused or failed`, {
        ...meta,
        event: LogEvent.downstreamCallFailed,
        result,
        error: (err as Error).message,
      });
      throw err;
    }
  });
}

export function createActivities({ bank, reservations, services, webhooks }: ActivityDeps) {
  return {
    ...traceDeliveries(createWebhookActivities(webhooks)),

    async chargePayment(target: DownstreamTarget, charge: ChargeRequest): Promise<{ chargeId: string }> {
      const { chargeId } = await track('bank', 'chargePayment', target, (key) => bank.charge(key, charge));
      return { chargeId };
    },

    async reverseCharge(target: DownstreamTarget): Promise<Reversal> {
      return track('bank', 'reverseCharge', target, (key) => bank.reverse(key), true);
    },

    async reserveItems(target: DownstreamTarget, hold: HoldRequest): Promise<{ reservationId: string }> {
      const { reservationId } = await track('reservations', 'reserveItems', target, (key) => reservations.hold(key, hold));
      return { reservationId };
    },

    async confirmReservation(target: DownstreamTarget): Promise<ReservationState> {
      return track('reservations', 'confirmReservation', target, (key) => reservations.confirm(key));
    },

    async releaseReservation(target: DownstreamTarget): Promise<ReservationState> {
      return track('reservations', 'releaseReservation', target, (key) => reservations.release(key), true);
    },

    /**
     * A declared call. Its kind decides the rule: a compensation (undo) is retried on any
     * non-2xx until done; a forward step's final refusals end it at once.
     */
    async callService(target: DownstreamTarget, call: ServiceCall & { undo?: true }): Promise<ServiceAnswer> {
      return track(
        call.service,
        `${call.method} ${call.path}`,
        target,
        (key) => callService(services, key, call, { compensation: call.undo === true }),
        call.undo === true,
      );
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
