// checkout on DBOS Transact: the peers' one saga (../saga.ts), each step a checkpointed
// DBOS step retried with the same key, each compensation a step retried until it succeeds.
//
// The workflow ID is `<tenant>/<key>`: DBOS runs one workflow per ID, checkpoints each
// step's outcome in PostgreSQL, and hands a second start of the same ID the stored result.
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import { StepFailedError, type CheckoutKeys, type CheckoutOutcome, type CheckoutRequest, type StepName } from '../contract.js';
import { refusalOf, type SandboxClients } from '../downstream.js';
import { checkoutSaga, type SagaEngine } from '../saga.js';

/**
 * A forward step: retried with the same key for about a minute (retrysafe's default
 * reconciliation deadline: 8 attempts, 0.25 s doubling to 16 s between them), then given
 * up, which fences it. A refusal is final at once.
 */
const STEP_RETRIES = {
  retriesAllowed: true,
  intervalSeconds: 0.25,
  backoffRate: 2,
  maxAttempts: 8,
  shouldRetry: (err: unknown) => refusalOf(err) === undefined,
};

/** A compensation: retried until it succeeds (DBOS caps the interval at an hour). */
const UNDO_RETRIES = { retriesAllowed: true, intervalSeconds: 1, backoffRate: 2, maxAttempts: Number.POSITIVE_INFINITY };

export interface CheckoutInput {
  keys: CheckoutKeys;
  request: CheckoutRequest;
}

/** Steps are checkpointed DBOS steps; compensations, DBOS steps retried until they succeed. */
const engine: SagaEngine = {
  step,
  undo: (name, action) => DBOS.runStep(action, { name, ...UNDO_RETRIES }),
};

/** Registers the workflow (before DBOS.launch) and returns the function to start it with. */
export function registerCheckout(downstream: SandboxClients) {
  async function checkout({ keys, request }: CheckoutInput): Promise<CheckoutOutcome> {
    return checkoutSaga(engine, downstream, keys, request);
  }
  return DBOS.registerWorkflow(checkout, { name: 'checkout' });
}

/**
 * One checkpointed step. A refusal, or retries that ran out, reach the saga as a
 * StepFailedError; anything else (a cancellation, a lost workflow) is DBOS's to handle.
 */
async function step<T>(name: StepName, action: () => Promise<T>): Promise<T> {
  try {
    return await DBOS.runStep(action, { name, ...STEP_RETRIES });
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal)
      throw new StepFailedError({
        step: name,
        businessCode: refusal.business ? refusal.code : undefined,
        message: refusal.message,
      });
    if (err instanceof DBOSErrors.DBOSMaxStepRetriesError) throw new StepFailedError({ step: name, message: err.message });
    throw err;
  }
}
