// Client of the reservation service: holds with a key, confirm and release idempotent by
// state. Answers are classified by the one rule in http.ts: a confirm of a hold that is gone
// (released, fenced, declined) is a final refusal, expired a business one when the step says so.
import { keyedService, type DownstreamAnswer, type HttpOptions } from './http.js';

export interface HoldRequest {
  items: Array<{ sku: string; quantity: number }>;
  ttlSeconds: number;
}

export interface Hold {
  reservationId: string;
  replayed: boolean;
}

export interface ReservationState {
  /** After a release, `fenced`: there was no hold under the key; a tombstone now refuses it. */
  status: string;
  reservationId: string | null;
}

export interface ReservationsClient {
  hold(key: string, request: HoldRequest): Promise<Hold>;
  confirm(key: string): Promise<ReservationState>;
  release(key: string): Promise<ReservationState>;
}

function state(answer: DownstreamAnswer): ReservationState {
  return { status: String(answer.body.status), reservationId: (answer.body.reservationId as string | null) ?? null };
}

export function createReservationsClient(opts: HttpOptions): ReservationsClient {
  const reservations = keyedService('reservations', opts);
  return {
    hold: reservations.creator('/reservations', 'reservationId'),
    confirm: async (key) => state(await reservations.action('/reservations/{key}/confirm', key, { undo: false })),
    release: async (key) => state(await reservations.action('/reservations/{key}/release', key, { undo: true })),
  };
}
