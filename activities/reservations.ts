// Client of the reservation service: holds with a key, confirm and release
// idempotent by state. Business refusals become the saga's business errors.
import {
  DownstreamConflictError,
  DownstreamUnavailableError,
  OutOfStockError,
  ReservationExpiredError,
  ReservationFencedError,
  UnknownSkuError,
} from './errors.js';
import { callDownstream, describeAnswer, pathKey, type DownstreamAnswer, type HttpOptions } from './http.js';

export interface HoldRequest {
  items: Array<{ sku: string; quantity: number }>;
  ttlSeconds: number;
}

export interface Hold {
  reservationId: string;
  replayed: boolean;
}

export interface ReservationState {
  status: string;
  reservationId: string | null;
}

export interface ReservationsClient {
  hold(key: string, request: HoldRequest): Promise<Hold>;
  confirm(key: string): Promise<ReservationState>;
  release(key: string): Promise<ReservationState>;
}

function refusal(answer: DownstreamAnswer): Error {
  const message = describeAnswer('reservations', answer);
  switch (answer.body.code) {
    case 'out_of_stock':
      return new OutOfStockError(message);
    case 'unknown_sku':
      return new UnknownSkuError(message);
    case 'reservation_expired':
      return new ReservationExpiredError(message);
    case 'reservation_fenced':
    case 'reservation_released':
    case 'reservation_declined':
      // The hold is gone (released, fenced or never made): retrying cannot confirm it.
      return new ReservationFencedError(message);
    case 'idempotency_key_reused':
      return new DownstreamConflictError(message);
    default:
      return new DownstreamUnavailableError(message);
  }
}

function state(answer: DownstreamAnswer): ReservationState {
  return { status: String(answer.body.status), reservationId: (answer.body.reservationId as string | null) ?? null };
}

export function createReservationsClient(opts: HttpOptions): ReservationsClient {
  return {
    async hold(key, request) {
      const answer = await callDownstream(opts, 'POST', '/reservations', { idempotencyKey: key, body: request });
      if (answer.status === 200 || answer.status === 201) {
        return { reservationId: String(answer.body.id), replayed: answer.replayed };
      }
      throw refusal(answer);
    },
    async confirm(key) {
      const answer = await callDownstream(opts, 'POST', `/reservations/${pathKey(key)}/confirm`, { body: {} });
      if (answer.status === 200) return state(answer);
      throw refusal(answer);
    },
    async release(key) {
      const answer = await callDownstream(opts, 'POST', `/reservations/${pathKey(key)}/release`, { body: {} });
      if (answer.status === 200) return state(answer);
      throw new DownstreamUnavailableError(describeAnswer('reservations', answer));
    },
  };
}
