// Activities are built by a factory so the worker wires real downstream clients and a
// test can wire its own. They hold no URLs and read no environment.
import { log } from '@temporalio/activity';
import type { BankClient, ChargeRequest, Reversal } from './bank.js';

export interface ActivityDeps {
  bank: BankClient;
}

export interface KeyedCharge extends ChargeRequest {
  /** `<workflowId>/charge`: the bank deduplicates retries of this step on it. */
  key: string;
}

export function createActivities({ bank }: ActivityDeps) {
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
  };
}

export type Activities = ReturnType<typeof createActivities>;
