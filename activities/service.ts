// A declared call: one keyed HTTP call of a step or compensation that has no code of its
// own. The workflow hands it the service's name, the method, the path and the body its
// program holds; the base URL is the worker's configuration for that service, so a URL
// never enters history, and a recorded program can only name a service the worker was
// configured with. The derived key is sent as Idempotency-Key and, where the path says
// `{key}`, in the path.
import { declaredCallProblem, type HttpMethod } from '../workflows/program.js';
import { DownstreamUnavailableError } from './errors.js';
import { callDownstream, expectSuccess, expectUndone, keyedPath } from './http.js';
import { programRefused } from './steps.js';

export interface ServiceCall {
  service: string;
  method: HttpMethod;
  path: string;
  body?: Record<string, unknown>;
}

export interface ServiceCallOptions {
  /** Base URL of each service a declared call may name. */
  urls: ReadonlyMap<string, string>;
  timeoutMs: number;
}

/** The answer as a step reads it: the body's fields, and whether the downstream replayed it. */
export type ServiceAnswer = Record<string, unknown> & { replayed: boolean };

/**
 * The declared call an activity of type `name` was scheduled with, checked: anything that is
 * not one (an activity the program names that this worker does not register), or a method or
 * path no declared call may have, is refused before any call is made.
 */
export function declaredCallOf(name: string, input: unknown, opts: ServiceCallOptions): ServiceCall & { undo?: true } {
  const call = input as Partial<ServiceCall & { undo: true }> | undefined;
  if (typeof call !== 'object' || call === null || typeof call.service !== 'string') {
    throw programRefused(`this worker registers no activity ${name}`, { activities: [name] });
  }
  const problem = declaredCallProblem(call);
  if (problem) throw programRefused(`${name}: ${problem}`);
  // Retried, not failed for good: a worker that knows the service may take the next attempt.
  if (!opts.urls.has(call.service))
    throw new DownstreamUnavailableError(`no base URL for service ${call.service} on this worker`);
  return call as ServiceCall & { undo?: true };
}

export async function callService(
  opts: ServiceCallOptions,
  downstreamKey: string,
  call: ServiceCall,
  { compensation }: { compensation: boolean },
): Promise<ServiceAnswer> {
  const baseUrl = opts.urls.get(call.service);
  // Retried, not failed for good: a worker that knows the service may take the next attempt.
  if (!baseUrl) throw new DownstreamUnavailableError(`no base URL for service ${call.service} on this worker`);
  const answer = await callDownstream({ baseUrl, timeoutMs: opts.timeoutMs }, call.method, keyedPath(call.path, downstreamKey), {
    idempotencyKey: downstreamKey,
    body: call.body ?? {},
  });
  const { body, replayed } = (compensation ? expectUndone : expectSuccess)(call.service, answer);
  return { ...body, replayed };
}
