// checkout on DBOS Transact: hold the goods, take the money, keep the goods.
//
//   release_reservation registered ─▶ reserve_items(<tenant>/<key>/reserve)
//   reverse_charge registered      ─▶ charge_payment(<tenant>/<key>/charge)
//                                   ─▶ confirm_reservation(<tenant>/<key>/reserve) ─▶ succeeded
//
//   a step refused (business) ─▶ its own compensation dropped, the earlier ones run
//   a step still failing after its retries ─▶ fenced: every registered compensation runs
//
// The workflow ID is `<tenant>/<key>`: DBOS runs one workflow per ID, checkpoints each
// step's outcome in PostgreSQL, and hands a second start of the same ID the stored result.
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import {
  compensationsFor,
  failed,
  HOLD_TTL_SECONDS,
  StepFailedError,
  succeeded,
  type CheckoutKeys,
  type CheckoutOutcome,
  type CheckoutRequest,
  type Compensation,
  type CompensationName,
  type StepName,
} from '../contract.js';
import { refusalOf, type SandboxClients } from '../downstream.js';

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

/** Registers the workflow (before DBOS.launch) and returns the function to start it with. */
export function registerCheckout(downstream: SandboxClients) {
  async function checkout({ keys, request }: CheckoutInput): Promise<CheckoutOutcome> {
    const compensations: Compensation[] = [];
    try {
      compensations.push({
        name: 'release_reservation',
        undoes: 'reserve_items',
        run: () => DBOS.runStep(() => downstream.release(keys.reserve), { name: 'release_reservation', ...UNDO_RETRIES }),
      });
      const { reservationId } = await step('reserve_items', () => downstream.hold(keys.reserve, request.items, HOLD_TTL_SECONDS));

      compensations.push({
        name: 'reverse_charge',
        undoes: 'charge_payment',
        run: () => DBOS.runStep(() => downstream.reverse(keys.charge), { name: 'reverse_charge', ...UNDO_RETRIES }),
      });
      const { chargeId } = await step('charge_payment', () =>
        downstream.charge(keys.charge, { account: request.account, amount: request.amount, currency: request.currency }),
      );

      await step('confirm_reservation', () => downstream.confirm(keys.reserve));
      return succeeded({ chargeId, reservationId });
    } catch (err) {
      if (!(err instanceof StepFailedError)) throw err;
      const ran: CompensationName[] = [];
      for (const compensation of compensationsFor(compensations, err.failure)) {
        await compensation.run();
        ran.push(compensation.name);
      }
      return failed(err.failure, ran);
    }
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
