// A Temporal client whose server does not exist (127.0.0.1:1), for tests of the HTTP edge:
// every call it makes fails, so what the API decides before any call is what is tested.
//
// The SDK's retry interceptor keeps the next attempt of a call scheduled through its
// back-off even after the API's engine deadline aborted the call. That attempt must not
// find the channel closed: it would throw from a timer, after the tests. So the
// connection retries exactly as the default does, but records when its last scheduled
// attempt is due, schedules none once `close` has begun, and closes after that attempt.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

export interface DeadEngine {
  client: Client;
  close(): Promise<void>;
}

export function deadEngine(): DeadEngine {
  const defaults = defaultGrpcRetryOptions();
  let closing = false;
  let lastDue = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !closing && defaults.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const delay = defaults.delayFunction(attempt, status);
      lastDue = Math.max(lastDue, Date.now() + delay);
      return delay;
    },
  });
  const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [interceptor] });
  return {
    client: new Client({ connection, namespace: 'default' }),
    async close() {
      closing = true;
      // Always a timer due after the last retry's: Node runs expired timers in the order
      // they are due, so a retry that is already due but late (a busy loop) runs first.
      const pending = Math.max(0, lastDue - Date.now());
      await sleep(pending + 100);
      await connection.close();
    },
  };
}
