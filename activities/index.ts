// Activities are built by a factory so the worker wires its configuration and a test can
// wire its own. They hold no URLs of their own and read no environment. Each step or
// compensation activity is handed the key it sends downstream and the operation it belongs
// to (a DownstreamTarget): nothing here recovers them from the workflow ID.
//
// Every step and compensation goes through one layer (steps.ts): it checks, on an
// operation's first call, that this worker has everything the operation's program needs,
// then counts and logs the call. A declared call is scheduled under its step's or
// compensation's own name and served by the worker's default activity (`default`), which
// makes the keyed HTTP call the program describes; hand-written activities of outside
// folders are registered by their names. The names recorded by operations started before
// programs were recorded (legacy.ts) stay registered for the histories that hold them. The
// completion webhook's two activities come from webhooks.ts; a worker without webhooks
// configured still registers them (they then fail retryably, so a configured worker can
// take over before the deadline).
import { Context } from '@temporalio/activity';
import type { DownstreamTarget } from '../workflows/contracts.js';
import { legacyActivities, legacyCallOf } from './legacy.js';
import { callService, declaredCallOf, type ServiceAnswer, type ServiceCallOptions } from './service.js';
import { StepLayer, type StepActivity } from './steps.js';
import { traceDeliveries } from './tracing.js';
import { createWebhookActivities, type WebhookDeps } from './webhooks.js';

export interface ActivityDeps {
  /** Base URLs of the services declared calls name, and the timeout of one call. */
  services: ServiceCallOptions;
  /** Hand-written activities that definitions of outside folders name (their activities.ts). */
  stepActivities?: Record<string, StepActivity>;
  /** Completion webhooks: the tenants' URLs and signing secrets; absent when none is configured. */
  webhooks?: WebhookDeps;
}

/** The names under which a worker registers step activities of its own (besides the default one). */
export function stepActivityNames(stepActivities: Record<string, unknown> = {}): string[] {
  return [...Object.keys(stepActivities), ...Object.keys(legacyActivities({ urls: new Map(), timeoutMs: 1 }))];
}

export function createActivities({ services, stepActivities = {}, webhooks }: ActivityDeps): Activities {
  const layer = new StepLayer({ services: [...services.urls.keys()], activities: stepActivityNames(stepActivities) });
  const named: Record<string, StepActivity> = {};
  for (const [name, fn] of Object.entries(stepActivities))
    named[name] = layer.step(name, () => ({ service: name, undo: false }), fn);
  for (const [name, fn] of Object.entries(legacyActivities(services)))
    named[name] = layer.step(name, (_target, input) => legacyCallOf(name, input), fn);
  const declared = (target: DownstreamTarget, input?: unknown): Promise<ServiceAnswer> => {
    const call = declaredCallOf(Context.current().info.activityType, input, services);
    return callService(services, target.downstreamKey, call, { compensation: call.undo === true });
  };
  return {
    ...traceDeliveries(createWebhookActivities(webhooks)),
    ...(named as ReturnType<typeof legacyActivities>),
    /**
     * Every activity type this worker does not register by name: a declared call, scheduled
     * as its step's or compensation's name. Anything else reaching it names an activity the
     * worker lacks, and is refused before any call.
     */
    default: layer.step(
      'default',
      (_target, input) => {
        const call = declaredCallOf(Context.current().info.activityType, input, services);
        return { service: call.service, undo: call.undo === true };
      },
      declared,
    ) as (target: DownstreamTarget, input?: unknown) => Promise<ServiceAnswer>,
  };
}

/**
 * The worker's activities: the webhook's two, the default one that serves every declared
 * call, and the step activities it registers by name: the recorded ones, typed, and an
 * outside folder's, which only the worker's registration sees.
 */
export type Activities = ReturnType<typeof createWebhookActivities> & {
  default: (target: DownstreamTarget, input?: unknown) => Promise<ServiceAnswer>;
} & ReturnType<typeof legacyActivities>;
