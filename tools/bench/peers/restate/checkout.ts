// checkout on Restate: hold the goods, take the money, keep the goods.
//
//   release_reservation pushed ─▶ reserve_items(<tenant>/<key>/reserve)
//   reverse_charge pushed      ─▶ charge_payment(<tenant>/<key>/charge)
//                               ─▶ confirm_reservation(<tenant>/<key>/reserve) ─▶ succeeded
//
//   a step refused (business) ─▶ its own compensation dropped, the earlier ones run
//   a step still failing after its retries ─▶ fenced: every pushed compensation runs
//
// A Workflow whose ID is `<tenant>/<key>`: Restate runs `run` once per ID and answers a
// later or concurrent submission of the same ID with that run's stored result, and the
// handler receives its ID as `ctx.key`, from which the downstream keys are derived. (An
// ingress `idempotency-key` on a plain service deduplicates too, but the handler cannot
// read that key, so it could not derive `<tenant>/<key>/charge` from it.)
import * as restate from '@restatedev/restate-sdk';
import {
  checkoutKeys,
  compensationsFor,
  failed,
  HOLD_TTL_SECONDS,
  StepFailedError,
  succeeded,
  type CheckoutOutcome,
  type CheckoutRequest,
  type Compensation,
  type CompensationName,
  type StepName,
} from '../contract.js';
import { refusalOf, type SandboxClients } from '../downstream.js';

/**
 * A forward step: retried with the same key for up to a minute (retrysafe's default
 * reconciliation deadline), then given up, which fences it.
 */
const STEP_RETRIES = { initialRetryInterval: 250, retryIntervalFactor: 2, maxRetryInterval: 5_000, maxRetryDuration: 60_000 };

/** retrysafe remembers a key for 7 days after its operation ends; so does this workflow. */
const KEY_RETENTION = { days: 7 };

export function checkoutWorkflow(downstream: SandboxClients) {
  return restate.workflow({
    name: 'Checkout',
    options: { workflowRetention: KEY_RETENTION },
    handlers: {
      run: async (ctx: restate.WorkflowContext, request: CheckoutRequest): Promise<CheckoutOutcome> => {
        const keys = checkoutKeys(ctx.key);
        const step = <T>(name: StepName, action: () => Promise<T>) => runStep(ctx, name, action);
        // Compensations get no retry bound of their own: Restate retries them under the
        // server's invocation retry policy (1.7: 70 attempts, then the invocation pauses
        // for an operator to resume; it is never dropped).
        const compensations: Compensation[] = [];
        try {
          compensations.push({
            name: 'release_reservation',
            undoes: 'reserve_items',
            run: () => ctx.run('release_reservation', () => downstream.release(keys.reserve)),
          });
          const { reservationId } = await step('reserve_items', () =>
            downstream.hold(keys.reserve, request.items, HOLD_TTL_SECONDS),
          );

          compensations.push({
            name: 'reverse_charge',
            undoes: 'charge_payment',
            run: () => ctx.run('reverse_charge', () => downstream.reverse(keys.charge)),
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
      },
    },
  });
}

/**
 * One journaled step. A refusal is terminal at once (no retry can change it); anything
 * else is retried by Restate per STEP_RETRIES. Either way the saga gets a StepFailedError.
 */
async function runStep<T>(ctx: restate.WorkflowContext, name: StepName, action: () => Promise<T>): Promise<T> {
  try {
    return await ctx.run(
      name,
      async () => {
        try {
          return await action();
        } catch (err) {
          const refusal = refusalOf(err);
          if (!refusal) throw err;
          throw new restate.TerminalError(refusal.message, {
            metadata: { code: refusal.code, business: String(refusal.business) },
          });
        }
      },
      STEP_RETRIES,
    );
  } catch (err) {
    if (!(err instanceof restate.TerminalError)) throw err;
    const business = err.metadata?.business === 'true' ? err.metadata.code : undefined;
    throw new StepFailedError({ step: name, businessCode: business, message: err.message });
  }
}
