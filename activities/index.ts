// Activities are built by a factory so the worker wires real downstream clients and a
// test can wire its own. They hold no URLs and read no environment.
import { Context, log } from '@temporalio/activity';
import type { CompensationName, StepName } from '../workflows/contracts.js';
import type { BankClient, ChargeRequest, Reversal } from './bank.js';
import { BusinessError, ChargeFencedError, DownstreamConflictError, ReservationFencedError } from './errors.js';
import type { HoldRequest, ReservationState, ReservationsClient } from './reservations.js';

export interface ActivityDeps {
  bank: BankClient;
  reservations: ReservationsClient;
}

export interface KeyedCharge extends ChargeRequest {
  /** `<workflowId>/charge`: the bank deduplicates retries of this step on it. */
  key: string;
}

export interface KeyedHold extends HoldRequest {
  /** `<workflowId>/reserve`: the reservation service deduplicates on it. */
  key: string;
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
  downstreamKey: string,
  call: () => Promise<T>,
): Promise<T> {
  const ctx = Context.current();
  const workflowId = ctx.info.workflowExecution?.workflowId ?? '';
  const slash = workflowId.indexOf('/');
  const meta = {
    tenant: workflowId.slice(0, slash),
    key: workflowId.slice(slash + 1),
    step,
    downstreamKey,
    requestId: `${ctx.info.activityId}#${ctx.info.attempt}`,
  };
  const calls = ctx.metricMeter.createCounter('retrysafe_downstream_calls', 'calls', 'Downstream calls by service and result');
  try {
    const answer = await call();
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

export function createActivities({ bank, reservations }: ActivityDeps) {
  return {
    async chargePayment(input: KeyedCharge): Promise<{ chargeId: string }> {
      const { key, ...request } = input;
      const charge = await track('bank', 'charge_payment', key, () => bank.charge(key, request));
      return { chargeId: charge.chargeId };
    },

    async reverseCharge(input: { key: string }): Promise<Reversal> {
      return track('bank', 'reverse_charge', input.key, () => bank.reverse(input.key));
    },

    async reserveItems(input: KeyedHold): Promise<{ reservationId: string }> {
      const { key, ...request } = input;
      const hold = await track('reservations', 'reserve_items', key, () => reservations.hold(key, request));
      return { reservationId: hold.reservationId };
    },

    async confirmReservation(input: { key: string }): Promise<ReservationState> {
      return track('reservations', 'confirm_reservation', input.key, () => reservations.confirm(input.key));
    },

    async releaseReservation(input: { key: string }): Promise<ReservationState> {
      return track('reservations', 'release_reservation', input.key, () => reservations.release(input.key));
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
