// The one workflow every operation runs: the definition named by the workflow type, its
// steps in order through the saga (saga.ts), the result fields its steps' answers give.
// Registered as the bundle's default workflow (index.ts), so an operation type the registry
// knows needs no workflow function of its own.
//
//   step 1 ─▶ step 2 ─▶ … ─▶ succeeded { result fields }
//     └───────┴── refused, fenced or cancelled ─▶ compensations in reverse ─▶ failed { code }
import { workflowInfo } from '@temporalio/workflow';
import type { OperationInput, OperationOutcome } from './contracts.js';
import { operationRef } from './identity.js';
import { bundledRegistry } from './registry.js';
import { Saga } from './saga.js';

export async function runOperation({
  tenant,
  key,
  request,
  settings,
  trace,
}: OperationInput<unknown>): Promise<OperationOutcome> {
  const { workflowType } = workflowInfo();
  const definition = bundledRegistry().get(workflowType);
  // A worker built without this definition: a plain Error fails the workflow task, not the
  // operation, and Temporal retries the task until a worker that has the definition runs it.
  if (!definition) throw new Error(`no operation is defined for workflow type ${workflowType}`);
  const saga = new Saga(definition, operationRef(tenant, key), settings, trace);
  try {
    return await saga.forward(async () => {
      const result: Record<string, string> = {};
      for (const step of definition.steps) {
        const answer = await saga.step(step, request);
        for (const [field, from] of Object.entries(step.result ?? {})) {
          if (answer[from] !== undefined && answer[from] !== null) result[field] = String(answer[from]);
        }
      }
      return saga.succeed(result);
    });
  } catch (err) {
    return saga.fail(err);
  }
}
