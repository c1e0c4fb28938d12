// The names of what a run measures against each operation type, in one place: the type's
// own scenario is named after it; the bare workflows it is measured against after it or its
// number of steps. They are the `kind` of each scenario in the results, and the report reads
// them back from the list the results keep (tools/bench/report/kinds.ts).
import type { OperationDefinition } from '../../../workflows/definition.js';

export interface OperationKinds {
  /** The operation through the API: its type. */
  own: string;
  /** Bare Temporal with as many no-op activities as the operation has steps (`bare3`): the engine's floor. */
  bare: string;
  /** Its number of steps. */
  activities: number;
  /** That bare workflow plus exactly retrysafe's bookkeeping (`bare3-tracked`). */
  tracked: string;
  /** retrysafe's workflow started by a Temporal client, without the API (`checkout-direct`). */
  direct: string;
  /** Bare Temporal making the operation's own keyed HTTP calls, nothing else (`bare-http-checkout`): the same work. */
  fair?: string;
}

const bareKind = (steps: number) => `bare${steps}`;

export function operationKinds(definition: Pick<OperationDefinition, 'type' | 'steps'>): OperationKinds {
  const n = definition.steps.length;
  return {
    own: definition.type,
    bare: bareKind(n),
    activities: n,
    tracked: `${bareKind(n)}-tracked`,
    direct: `${definition.type}-direct`,
    fair: `bare-http-${definition.type}`,
  };
}
