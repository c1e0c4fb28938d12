// The bare-Temporal baselines: plain workflows on their own task queue and worker, started
// by a Temporal client, with no API, no memo, no search attributes, no compensation stack.
//
// - `bare`: as many no-op activities as an operation has steps. The engine's floor:
//   whatever retrysafe costs beyond it is retrysafe's own, its downstream calls included.
//   In both activity kinds (regular: scheduled on the task queue, one workflow task per
//   step; local: run inside the workflow task, recorded as markers), because R1 compares
//   with the kind retrysafe's steps use.
// - `bareTracked`: the same plus exactly retrysafe's bookkeeping (a memo and a search
//   attribute upsert when each step starts and at the end), to price that alone.
// - `bareHttp`: the same work as the operation (the fair baseline): its definition's steps
//   in order, each the SAME keyed call to the same sandbox through the same activities
//   (activities/, wired as the worker wires them), with the same derived keys
//   (`<tenant>/<key>/<suffix>`) and the same request, as local activities (as retrysafe's
//   first attempts are). Nothing else: no compensation registered, no progress, no books.
//
// Deterministic like workflows/: it imports only the workflow SDK and workflow modules.
import {
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { SearchAttributes, type DownstreamTarget, type StepName } from '../../../workflows/contracts.js';
import { defaultSettings } from '../../../workflows/definition.js';
import { fieldsOf, type StepCall } from '../../../workflows/program.js';
import { FINAL_FAILURE_TYPES } from '../../../workflows/failures.js';
import { downstreamKey, operationRef } from '../../../workflows/identity.js';
import { builtInCatalog } from '../../../workflows/catalog.js';
import type { BaselineActivities } from './activities.js';

// The same start-to-close and retry back-off as a retrysafe step's retries (workflows/activity-options.ts).
const STEP = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '250ms', backoffCoefficient: 2, maximumInterval: '5s' },
} as const;

const regular = proxyActivities<BaselineActivities>(STEP);
const local = proxyLocalActivities<BaselineActivities>(STEP);

type Noop = (key: string) => Promise<void>;

export interface BareInput {
  key: string;
  /** How many no-op activities: as many as the operation measured against has steps. */
  steps: number;
}

async function steps(noop: Noop, { key, steps: n }: BareInput): Promise<{ ok: true }> {
  for (let i = 0; i < n; i++) await noop(key);
  return { ok: true };
}

export interface TrackedInput {
  key: string;
  /** The operation's step names, from its definition: what the memo names. */
  names: StepName[];
}

async function tracked(noop: Noop, { key, names }: TrackedInput): Promise<{ ok: true }> {
  const progress = names.map((name) => ({ name, status: 'pending', downstreamKey: downstreamKey(key, name) }));
  const publish = (step: StepName, status: string) => {
    upsertMemo({ step, steps: progress.map((s) => ({ ...s })) });
    upsertSearchAttributes([
      { key: SearchAttributes.OperationStatus, value: status },
      { key: SearchAttributes.OperationStep, value: step },
    ]);
  };
  for (const s of progress) {
    s.status = 'running';
    publish(s.name, 'processing');
    await noop(key);
    s.status = 'completed';
  }
  publish(names[names.length - 1]!, 'succeeded');
  return { ok: true };
}

export const bare = (input: BareInput) => steps(regular.noop, input);
export const bareLocal = (input: BareInput) => steps(local.noop, input);
export const bareTracked = (input: TrackedInput) => tracked(regular.noop, input);
export const bareLocalTracked = (input: TrackedInput) => tracked(local.noop, input);

/** The activities as a definition's calls name them (activities/index.ts createActivities). */
type Calls = Record<string, (...args: unknown[]) => Promise<unknown>>;

/**
 * One attempt's bounds as retrysafe's first attempt has them (10 s, within the API's default
 * step deadline of 60 s), retried as its steps are; a refusal is final.
 */
const calls = proxyLocalActivities<Calls>({
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '60s',
  retry: { ...STEP.retry, nonRetryableErrorTypes: [...FINAL_FAILURE_TYPES] },
});

export interface BareHttpInput {
  /** The operation type whose steps it makes. */
  type: string;
  tenant: string;
  key: string;
  request: Record<string, unknown>;
}

/** A step's call exactly as the saga makes it: a hand-written activity with its input, or a declared call under the step's name. */
function callOf(
  call: StepCall,
  name: string,
  target: DownstreamTarget,
  service: string,
  request: Record<string, unknown>,
  settings: Record<string, number>,
): Promise<unknown> {
  if (call.kind === 'activity') {
    return call.input === undefined
      ? calls[call.activity]!(target)
      : calls[call.activity]!(target, fieldsOf(call.input, request, settings));
  }
  return calls[name]!(target, {
    service,
    method: call.method,
    path: call.path,
    ...(call.body ? { body: fieldsOf(call.body, request, settings) } : {}),
  });
}

export async function bareHttp(input: BareHttpInput): Promise<{ ok: true }> {
  const definition = builtInCatalog.get(input.type);
  // Fails the workflow rather than its task: a bench batch must end, not wait on a retry forever.
  if (!definition) throw ApplicationFailure.nonRetryable(`no operation type ${input.type} in the registry`, 'UnknownType');
  const operation = operationRef(input.tenant, input.key);
  for (const step of definition.steps) {
    const target: DownstreamTarget = {
      operation,
      downstreamKey: downstreamKey(operation.workflowId, step.keySuffix),
      step: step.name,
    };
    await callOf(step.call, step.name, target, step.service, input.request, defaultSettings(definition));
  }
  return { ok: true };
}
