// What the peers share with retrysafe's checkout, so the race compares engines and not
// sagas: the same request, the same keys (`<tenant>/<key>/reserve`, `<tenant>/<key>/charge`,
// derived in retrysafe's own identity module), the same outcome shape and error codes.
// Plain data and pure functions: no engine, no I/O.
import type { Static } from 'typebox';
import type { CompensationName, StepName } from '../../../workflows/contracts.js';
import { downstreamKey, operationRef } from '../../../workflows/identity.js';
import { checkout, type CheckoutRequest as CheckoutSchema } from '../../../workflows/definitions/checkout.js';

export type CheckoutRequest = Static<typeof CheckoutSchema>;
export type { CompensationName, StepName };

/** A step of retrysafe's checkout definition, by name. */
function step(name: StepName) {
  const found = checkout.steps.find((s) => s.name === name);
  if (!found) throw new Error(`the checkout definition has no step ${name}`);
  return found;
}

/** The operation the peers run: their figures stand beside this type's only. */
export const PEER_OPERATION = checkout.type;

/** The bench runs every engine as retrysafe runs without API keys: one tenant. */
export const TENANT = 'default';

/** How long a peer's hold lasts: retrysafe's default, so both sides ask the same of the sandbox. */
export const HOLD_TTL_SECONDS = 900;

/** The answer body of a finished checkout, a subset of retrysafe's operation resource. */
export interface CheckoutOutcome {
  type: 'checkout';
  status: 'succeeded' | 'failed';
  result?: { chargeId: string; reservationId: string };
  error?: { code: string; message: string; compensations: CompensationName[] };
}

/** `<tenant>/<key>`: the engine's own identity for the checkout (a workflow ID). */
export function operationId(key: string): string {
  return operationRef(TENANT, key).workflowId;
}

/** The key each step sends downstream, derived from the operation's ID. */
export interface CheckoutKeys {
  operationId: string;
  reserve: string;
  charge: string;
}

export function checkoutKeys(id: string): CheckoutKeys {
  return {
    operationId: id,
    reserve: downstreamKey(id, step('reserve_items').keySuffix),
    charge: downstreamKey(id, step('charge_payment').keySuffix),
  };
}

/** Code of a checkout whose step could not be reconciled before its deadline: the definition's. */
function unavailableCode(name: StepName): string {
  return step(name).unavailableCode ?? checkout.unavailableCode;
}

/** Business outcomes the sandboxes answer with, as the checkout definition's steps declare them: final, and the step took no effect. */
export const BUSINESS_CODES: ReadonlySet<string> = new Set(checkout.steps.flatMap((s) => Object.keys(s.businessErrors)));

/**
 * Why a step failed for good, as the saga sees it: a business refusal (`businessCode`), or an
 * outcome that stayed unknown until the step's retries ran out (the step is then fenced
 * by its own compensation, like retrysafe's reconciliation deadline).
 */
export interface StepFailure {
  step: StepName;
  /** The sandbox's business code, when it refused; the step then took no effect. */
  businessCode?: string;
  message: string;
}

export class StepFailedError extends Error {
  override name = 'StepFailedError';
  constructor(readonly failure: StepFailure) {
    super(`${failure.step} failed: ${failure.message}`);
  }
}

/** A compensation, registered before the step it undoes runs. */
export interface Compensation {
  name: CompensationName;
  /** The step it undoes. */
  undoes: StepName;
  run: () => Promise<unknown>;
}

/**
 * The compensations to run after `failure`, in the order to run them (reverse of
 * registration). A step refused for a business reason took no effect, so its own
 * compensation is left out; a step whose outcome stayed unknown is fenced by its own.
 */
export function compensationsFor(registered: Compensation[], failure: StepFailure): Compensation[] {
  return registered.filter((c) => !(failure.businessCode && c.undoes === failure.step)).reverse();
}

export function succeeded(result: { chargeId: string; reservationId: string }): CheckoutOutcome {
  return { type: 'checkout', status: 'succeeded', result };
}

export function failed(failure: StepFailure, compensations: CompensationName[]): CheckoutOutcome {
  const code = failure.businessCode ?? unavailableCode(failure.step);
  return { type: 'checkout', status: 'failed', error: { code, message: failure.message, compensations } };
}
