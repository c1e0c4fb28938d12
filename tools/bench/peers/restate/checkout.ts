// checkout on Restate: the peers' one saga (../saga.ts), each step and each compensation
// journaled with ctx.run.
//
// A Workflow whose ID is `<tenant>/<key>`: Restate runs `run` once per ID and answers a
// later or concurrent submission of the same ID with that run's stored result, and the
// handler receives its ID as `ctx.key`, from which the downstream keys are derived. (An
// ingress `idempotency-key` on a plain service deduplicates too, but the handler cannot
// read that key, so it could not derive `<tenant>/<key>/charge` from it.)
import * as restate from '@restatedev/restate-sdk';
import { checkoutKeys, StepFailedError, type CheckoutOutcome, type CheckoutRequest, type StepName } from '../contract.js';
import { refusalOf, type SandboxClients } from '../downstream.js';
import { checkoutSaga, type SagaEngine } from '../saga.js';

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
        // Compensations get no retry bound of their own: Restate retries them under the
        // server's invocation retry policy (1.7: 70 attempts, then the invocation pauses
        // for an operator to resume; it is never dropped).
        const engine: SagaEngine = {
          step: (name, action) => runStep(ctx, name, action),
          undo: (name, action) => ctx.run(name, action),
        };
        return checkoutSaga(engine, downstream, checkoutKeys(ctx.key), request);
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
