// retrysafe's checkout as both peers run it: hold the goods, take the money, keep the goods,
// each compensation pushed before its step runs.
//
//   release_reservation pushed ─▶ reserve_items(<tenant>/<key>/reserve)
//   reverse_charge pushed      ─▶ charge_payment(<tenant>/<key>/charge)
//                               ─▶ confirm_reservation(<tenant>/<key>/reserve) ─▶ succeeded
//
//   a step refused (business) ─▶ its own compensation dropped, the earlier ones run
//   a step still failing after its retries ─▶ fenced: every pushed compensation runs
//
// One saga, so that the race compares engines and not sagas: each engine supplies only how
// it journals a step (and gives it up) and how it journals a compensation (dbos/checkout.ts,
// restate/checkout.ts).
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
} from './contract.js';
import type { SandboxClients } from './downstream.js';

/** How an engine runs the saga's parts durably. */
export interface SagaEngine {
  /** A forward step, journaled; one that fails for good (a refusal, its retries spent) throws StepFailedError. */
  step<T>(name: StepName, action: () => Promise<T>): Promise<T>;
  /** A compensation, journaled and retried until it succeeds. */
  undo(name: CompensationName, action: () => Promise<unknown>): Promise<unknown>;
}

export async function checkoutSaga(
  engine: SagaEngine,
  downstream: SandboxClients,
  keys: CheckoutKeys,
  request: CheckoutRequest,
): Promise<CheckoutOutcome> {
  const compensations: Compensation[] = [];
  try {
    compensations.push({
      name: 'release_reservation',
      undoes: 'reserve_items',
      run: () => engine.undo('release_reservation', () => downstream.release(keys.reserve)),
    });
    const { reservationId } = await engine.step('reserve_items', () =>
      downstream.hold(keys.reserve, request.items, HOLD_TTL_SECONDS),
    );

    compensations.push({
      name: 'reverse_charge',
      undoes: 'charge_payment',
      run: () => engine.undo('reverse_charge', () => downstream.reverse(keys.charge)),
    });
    const { chargeId } = await engine.step('charge_payment', () =>
      downstream.charge(keys.charge, { account: request.account, amount: request.amount, currency: request.currency }),
    );

    await engine.step('confirm_reservation', () => downstream.confirm(keys.reserve));
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
