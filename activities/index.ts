// Activities are built by a factory so the worker wires real downstream clients and a
// test can wire its own. They hold no URLs and read no environment.
import { log } from '@temporalio/activity';
import type { BankClient, ChargeRequest, Reversal } from './bank.js';
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

export function createActivities({ bank, reservations }: ActivityDeps) {
  return {
    async chargePayment(input: KeyedCharge): Promise<{ chargeId: string }> {
      const { key, ...request } = input;
      const charge = await bank.charge(key, request);
      log.info('charge_payment done', { downstreamKey: key, chargeId: charge.chargeId, replayed: charge.replayed });
      return { chargeId: charge.chargeId };
    },

    async reverseCharge(input: { key: string }): Promise<Reversal> {
      const reversal = await bank.reverse(input.key);
      log.info('reverse_charge done', { downstreamKey: input.key, status: reversal.status, refunded: reversal.refunded });
      return reversal;
    },

    async reserveItems(input: KeyedHold): Promise<{ reservationId: string }> {
      const { key, ...request } = input;
      const hold = await reservations.hold(key, request);
      log.info('reserve_items done', { downstreamKey: key, reservationId: hold.reservationId, replayed: hold.replayed });
      return { reservationId: hold.reservationId };
    },

    async confirmReservation(input: { key: string }): Promise<ReservationState> {
      const confirmed = await reservations.confirm(input.key);
      log.info('confirm_reservation done', { downstreamKey: input.key, status: confirmed.status });
      return confirmed;
    },

    async releaseReservation(input: { key: string }): Promise<ReservationState> {
      const released = await reservations.release(input.key);
      log.info('release_reservation done', { downstreamKey: input.key, status: released.status });
      return released;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
