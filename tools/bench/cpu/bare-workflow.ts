// The fair bare baseline of tools/bench/cpu-per-op.ts (its worker: ./bare-worker.ts): plain Temporal making the same keyed HTTP
// calls an operation makes, in the same order, each one local activity, and nothing else:
// no memo or search-attribute upserts, no compensation stack, no progress, no logs. What
// an operation costs beyond this workflow is retrysafe's own.
// Deterministic like workflows/: it imports only the workflow SDK.
import { proxyLocalActivities } from '@temporalio/workflow';

/** One keyed call, composed by the client from the operation's steps: the key travels as Idempotency-Key. */
export interface BareCall {
  service: string;
  method: string;
  path: string;
  key: string;
  body: Record<string, unknown>;
}

export interface BareActivities {
  keyedCall(call: BareCall): Promise<Record<string, unknown>>;
}

// A step's first attempt in retrysafe: one local try within the attempt's timeout.
const { keyedCall } = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

export async function bareCalls(calls: BareCall[]): Promise<Array<Record<string, unknown>>> {
  const answers: Array<Record<string, unknown>> = [];
  for (const call of calls) answers.push(await keyedCall(call));
  return answers;
}
