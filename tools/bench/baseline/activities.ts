// The baselines' activities. The no-op one returns at once, so the no-op baseline measures
// the engine. The same-work baseline calls retrysafe's own activities (activities/), wired to
// the sandboxes as the retrysafe worker wires them: the same HTTP clients and timeouts.
import { createActivities } from '../../../activities/index.js';

export const baselineActivities = {
  async noop(_key: string): Promise<void> {},
};

export type BaselineActivities = typeof baselineActivities;

/** Each downstream call's own timeout, in the retrysafe worker and the baseline worker alike. */
export const DOWNSTREAM_TIMEOUT_MS = 5_000;

/** Every activity the baseline worker registers: the no-op one and the real ones, for the built-in services. */
export function baselineWorkerActivities(urls: { bank: string; reservations: string }) {
  const timeoutMs = DOWNSTREAM_TIMEOUT_MS;
  return {
    ...createActivities({
      services: {
        urls: new Map([
          ['bank', urls.bank],
          ['reservations', urls.reservations],
        ]),
        timeoutMs,
      },
    }),
    ...baselineActivities,
  };
}
