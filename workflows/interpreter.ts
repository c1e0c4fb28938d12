// The one workflow every operation runs: the program its input carries (the definition as
// it was when the operation started, program.ts), its steps in order through the saga
// (saga.ts), the result fields its steps' answers give. Registered as the bundle's default
// workflow (index.ts), so an operation type needs no workflow function of its own, and a
// definition may change while its operations are in flight: each finishes on its own program.
//
//   check the program ─▶ step 1 ─▶ step 2 ─▶ … ─▶ succeeded { result fields }
//     │                    └───────┴── refused, fenced or cancelled ─▶ compensations in reverse ─▶ failed { code }
//     └ malformed: no step runs ─▶ failed definition_refused, NeedsAttention
import { workflowInfo } from '@temporalio/workflow';
import type { OperationInput, OperationOutcome } from './contracts.js';
import { operationRef } from './identity.js';
import { legacyProgram } from './legacy.js';
import { programProblems, type OperationProgram } from './program.js';
import { bundledCatalog } from './catalog.js';
import { Saga } from './saga.js';

/** The program to run: the recorded one, or, for an operation started before programs were recorded, its type's definition here. */
function programOf({ program, settings }: OperationInput<unknown>): { program: OperationProgram; legacy: boolean } {
  if (program !== undefined) return { program, legacy: false };
  const { workflowType } = workflowInfo();
  const definition = bundledCatalog().get(workflowType);
  // A worker built without this definition: a plain Error fails the workflow task, not the
  // operation, and Temporal retries the task until a worker that has the definition runs it.
  if (!definition) throw new Error(`no operation is defined for workflow type ${workflowType}`);
  return { program: legacyProgram(definition, settings), legacy: true };
}

export async function runOperation(input: OperationInput<unknown>): Promise<OperationOutcome> {
  const { tenant, key, request, settings, trace } = input;
  const { program, legacy } = programOf(input);
  // A recorded program is input, not trust: one that does not hold together runs nothing.
  const problems = legacy ? [] : programProblems(program);
  const runnable: OperationProgram =
    problems.length === 0
      ? program
      : {
          version: String(program.version ?? ''),
          type: workflowInfo().workflowType,
          unavailableCode: '',
          settings: {},
          steps: [],
        };
  const saga = new Saga(runnable, operationRef(tenant, key), (request ?? {}) as Record<string, unknown>, settings, {
    legacy,
    ...(trace ? { trace } : {}),
  });
  if (problems.length > 0) return saga.refuse(`its definition cannot run: ${problems.join('; ')}`);
  try {
    return await saga.forward(async () => {
      const result: Record<string, string> = {};
      for (const step of program.steps) {
        const answer = await saga.step(step);
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
