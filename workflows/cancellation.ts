// A cancel request, as the saga sees it. Temporal's own cancellation is the mechanism
// (RequestCancelWorkflowExecution: durable, recorded in history, idempotent); the saga
// only decides what it means: the step in flight is shielded and finishes (its outcome
// known, or fenced at its deadline), no new step starts, and the registered compensations
// run as for any failure.
//
// The request's reason (who asked, and when) reaches the worker in the activation but the
// SDK does not hand it to workflow code, so the internals interceptor below reads it off
// the activation. The worker bundles this module as a workflow interceptor module
// (WORKFLOW_INTERCEPTOR_MODULES in worker/create.ts); bundled without it, a cancel works
// the same and its details only lack the reason. Module state is per workflow execution:
// the SDK gives every execution its own module cache.
import { CancellationScope, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

let requestReason: string | undefined;

export const interceptors: WorkflowInterceptorsFactory = () => ({
  internals: [
    {
      activate(input, next) {
        for (const job of input.activation.jobs ?? []) {
          if (job.cancelWorkflow) requestReason = job.cancelWorkflow.reason || undefined;
        }
        return next(input);
      },
    },
  ],
});

/** Whether a cancel was requested, and what to do the moment one is. */
export class CancelWatch {
  private readonly scope = CancellationScope.current();
  private noticed = false;

  /** `onRequest` runs once, in the activation that delivers the request. */
  constructor(onRequest: (reason: string | undefined) => void) {
    this.scope.cancelRequested.catch(() => {
      this.noticed = true;
      onRequest(requestReason);
    });
  }

  /**
   * Read synchronously at a step boundary: the scope knows at once, even in an activation
   * that also resolves the step that just ran (the handler above may run a microtask later).
   */
  get requested(): boolean {
    return this.noticed || this.scope.consideredCancelled;
  }

  get reason(): string | undefined {
    return requestReason;
  }
}
