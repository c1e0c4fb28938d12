// Client of the bank. Maps the bank's answers onto the failures the saga
// understands: business errors (final), a fenced key (final), anything else transient.
import {
  AccountNotFoundError,
  ChargeFencedError,
  CurrencyMismatchError,
  DownstreamConflictError,
  DownstreamUnavailableError,
  InsufficientFundsError,
} from './errors.js';
import { callDownstream, describeAnswer, pathKey, type HttpOptions } from './http.js';

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
  status: 'reversed' | 'fenced' | 'declined';
  chargeId: string | null;
  refunded: number;
}

export interface BankClient {
  charge(key: string, request: ChargeRequest): Promise<Charge>;
  reverse(key: string): Promise<Reversal>;
}

export function createBankClient(opts: HttpOptions): BankClient {
  return {
    async charge(key, request) {
      const answer = await callDownstream(opts, 'POST', '/charges', { idempotencyKey: key, body: request });
      if (answer.status === 200 || answer.status === 201) {
        return { chargeId: String(answer.body.id), replayed: answer.replayed };
      }
      const message = describeAnswer('bank', answer);
      switch (answer.body.code) {
        case 'insufficient_funds':
          throw new InsufficientFundsError(message);
        case 'account_not_found':
          throw new AccountNotFoundError(message);
        case 'currency_mismatch':
          throw new CurrencyMismatchError(message);
        case 'charge_fenced':
          throw new ChargeFencedError(message);
        case 'idempotency_key_reused':
          throw new DownstreamConflictError(message);
        default:
          throw new DownstreamUnavailableError(message);
      }
    },
    async reverse(key) {
      const answer = await callDownstream(opts, 'POST', `/charges/${pathKey(key)}/reverse`, { body: {} });
      if (answer.status !== 200) throw new DownstreamUnavailableError(describeAnswer('bank', answer));
      return {
        status: answer.body.status as Reversal['status'],
        chargeId: (answer.body.chargeId as string | null) ?? null,
        refunded: Number(answer.body.refunded ?? 0),
      };
    },
  };
}
