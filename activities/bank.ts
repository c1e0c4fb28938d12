// Client of the bank: a keyed charge and its keyed reversal. Answers are classified by the
// one rule in http.ts; which refusals are business outcomes is the step definition's to say.
import { keyedService, type HttpOptions } from './http.js';

export interface ChargeRequest {
  account: string;
  amount: number;
  currency: string;
}

export interface Charge {
  chargeId: string;
  replayed: boolean;
}

export interface Reversal {
  /** `fenced`: there was no charge under the key; a tombstone now refuses it. */
  status: 'reversed' | 'fenced' | 'declined';
  chargeId: string | null;
  refunded: number;
}

export interface BankClient {
  charge(key: string, request: ChargeRequest): Promise<Charge>;
  reverse(key: string): Promise<Reversal>;
}

export function createBankClient(opts: HttpOptions): BankClient {
  const bank = keyedService('bank', opts);
  return {
    charge: bank.creator('/charges', 'chargeId'),
    async reverse(key) {
      const answer = await bank.action('/charges/{key}/reverse', key, { undo: true });
      return {
        status: answer.body.status as Reversal['status'],
        chargeId: (answer.body.chargeId as string | null) ?? null,
        refunded: Number(answer.body.refunded ?? 0),
      };
    },
  };
}
