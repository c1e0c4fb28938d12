// Every Temporal call the API makes runs under a deadline, so a dead engine answers 503 in
// bounded time. The gRPC deadline alone is not enough: the SDK's retry interceptor sleeps
// between attempts and only notices an expired deadline on the next one, so a timer
// aborts the call too and the race answers at the deadline whatever the call is doing.
import type { Client } from '@temporalio/client';
import { EngineTimeoutError } from '../engine-errors.js';

/** Runs `fn` (Temporal calls through the client) under the engine deadline, or `timeoutMs`. */
export type EngineCall = <T>(fn: () => Promise<T>, timeoutMs?: number) => Promise<T>;

export function engineDeadline(client: Client, defaultTimeoutMs: number, now: () => Date): EngineCall {
  return <T>(fn: () => Promise<T>, timeoutMs = defaultTimeoutMs): Promise<T> => {
    const abort = new AbortController();
    const call = client.withAbortSignal(abort.signal, () => client.withDeadline(now().getTime() + timeoutMs, fn));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new EngineTimeoutError(timeoutMs));
      }, timeoutMs);
    });
    return Promise.race([call, expired]).finally(() => {
      clearTimeout(timer);
      // The losing call settles later (cancelled): observe it so it is not an unhandled rejection.
      call.catch(() => undefined);
    });
  };
}
