// The activity names recorded by operations started before each operation carried its
// program (workflows/legacy.ts): payment's and checkout's hand-written steps, and the one
// generic `callService` every declared call was scheduled as. They stay registered so that
// such operations, still in flight across an upgrade, find the steps they have not reached
// yet; each is now the declared call its step is, answering in the shape it always did
// (the recorded histories read those answers).
import type { DownstreamTarget } from '../workflows/contracts.js';
import { callService, declaredCallOf, type ServiceCall, type ServiceCallOptions } from './service.js';

type Body = Record<string, unknown>;

interface RecordedCall {
  service: string;
  path: string;
  undo?: true;
  /** The answer as the hand-written activity returned it. */
  answer: (body: Body) => unknown;
}

const reservationState = (body: Body) => ({
  status: String(body.status),
  reservationId: (body.reservationId as string | null) ?? null,
});

const RECORDED = {
  chargePayment: { service: 'bank', path: '/charges', answer: (body) => ({ chargeId: String(body.id) }) },
  reverseCharge: {
    service: 'bank',
    path: '/charges/{key}/reverse',
    undo: true,
    answer: (body) => ({
      status: body.status,
      chargeId: (body.chargeId as string | null) ?? null,
      refunded: Number(body.refunded ?? 0),
    }),
  },
  reserveItems: { service: 'reservations', path: '/reservations', answer: (body) => ({ reservationId: String(body.id) }) },
  confirmReservation: { service: 'reservations', path: '/reservations/{key}/confirm', answer: reservationState },
  releaseReservation: { service: 'reservations', path: '/reservations/{key}/release', undo: true, answer: reservationState },
} satisfies Record<string, RecordedCall>;

type RecordedName = keyof typeof RECORDED;
type RecordedActivity = (target: DownstreamTarget, input?: Body) => Promise<unknown>;

/** Each recorded activity's service, and whether it is a compensation, for the activity layer's books and spans. */
export function legacyCallOf(name: string, input: unknown): { service: string; undo: boolean } {
  const recorded = (RECORDED as Record<string, RecordedCall>)[name];
  if (recorded) return { service: recorded.service, undo: recorded.undo === true };
  const call = input as { service?: string; undo?: boolean } | undefined;
  return { service: call?.service ?? 'unknown', undo: call?.undo === true };
}

export function legacyActivities(services: ServiceCallOptions) {
  const recorded = Object.fromEntries(
    Object.entries(RECORDED as Record<string, RecordedCall>).map(([name, { service, path, undo, answer }]) => [
      name,
      async (target: DownstreamTarget, input?: Body) => {
        const call: ServiceCall = { service, method: 'POST', path, ...(input === undefined ? {} : { body: input }) };
        return answer(await callService(services, target.downstreamKey, call, { compensation: undo === true }));
      },
    ]),
  ) as Record<RecordedName, RecordedActivity>;
  return {
    ...recorded,
    /** Every declared call of such an operation, under one name. */
    callService: async (target: DownstreamTarget, input: ServiceCall & { undo?: true }) => {
      const call = declaredCallOf('callService', input, services);
      return callService(services, target.downstreamKey, call, { compensation: call.undo === true });
    },
  };
}
